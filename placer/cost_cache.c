/* The figures of one device on disk (cost_impl.h), one file per device
 * identity in the cache folder the OpenCL program cache uses:
 * $XDG_CACHE_HOME/tgc/cost-HASH.txt (else $HOME/.cache/tgc), HASH the
 * FNV-1a of the identity line. Lines of text, numbers as C's hexadecimal
 * floats (%a: read back to the same bits, so a cache gives the same
 * figures every time):
 *
 *     tgc-cost 1
 *     id tgc 0.1.0 cpu width 1 isa avx2 Intel(R) Xeon(R) ...
 *     peaks FLOPS BYTES_PER_SECOND NODE_SECONDS
 *     link host|to|from SECONDS BYTES_PER_SECOND
 *     node SECONDS KEY
 *     end COUNT
 *
 * `end` counts the lines before it: a file cut short has none. The file
 * is untrusted: anything that does not read exactly so (another version,
 * another device, a number that is not finite and positive, a line over
 * 8 KiB, a file over 64 MiB) makes the whole file ignored, and the next
 * save replaces it. A save writes NAME.PID.tmp and renames it over NAME,
 * so a reader sees the old file or the new one, never half of one. */
#include "placer/cost_impl.h"

#include "support/alloc.h"
#include "support/cache_dir.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC "tgc-cost 1"
#define MAX_FILE_BYTES (64l << 20)
#define MAX_LINE 8192

static const char *const link_names[COST_LINK_COUNT] = {"host", "to", "from"};

static uint64_t fnv(const char *s) {
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* A finite positive number filling `text` exactly. */
static bool read_number(const char *text, double *out) {
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || *end != '\0' || errno != 0 || !isfinite(v) || v <= 0) return false;
    *out = v;
    return true;
}

/* Splits line (NUL-terminated, changed) at spaces into up to max words;
 * the last word takes the rest of the line. Returns the count. */
static int split(char *line, char **words, int max) {
    int n = 0;
    char *p = line;
    while (n < max && *p != '\0') {
        words[n++] = p;
        if (n == max) break;
        char *sp = strchr(p, ' ');
        if (sp == NULL) break;
        *sp = '\0';
        p = sp + 1;
    }
    return n;
}

/* Reads one line of the file into f; false when it is not one. */
static bool read_line(tgc_cost_file *f, char *line, int index, bool *ended) {
    char *w[4];
    if (*ended) return false; /* nothing after `end` */
    if (index == 0) return strcmp(line, MAGIC) == 0;
    if (index == 1) return strncmp(line, "id ", 3) == 0 && strcmp(line + 3, f->identity) == 0;
    if (strncmp(line, "node ", 5) == 0) { /* node SECONDS KEY: the key is the rest of the line */
        double s;
        if (split(line, w, 3) != 3 || !read_number(w[1], &s) || w[2][0] == '\0' || tgc_cost_file_get(f, w[2]) >= 0)
            return false;
        return tgc_cost_file_put(f, w[2], s) == TGC_OK;
    }
    int n = split(line, w, 4);
    if (n == 4 && strcmp(w[0], "peaks") == 0 && strchr(w[3], ' ') == NULL)
        return read_number(w[1], &f->peaks.flops) && read_number(w[2], &f->peaks.bytes) &&
               read_number(w[3], &f->peaks.node_seconds);
    if (n == 2 && strcmp(w[0], "end") == 0) {
        char *end = NULL;
        errno = 0;
        long long count = strtoll(w[1], &end, 10);
        *ended = end != w[1] && *end == '\0' && errno == 0 && count == index - 2;
        return *ended;
    }
    if (n == 4 && strcmp(w[0], "link") == 0 && strchr(w[3], ' ') == NULL) {
        for (int k = 0; k < COST_LINK_COUNT; k++)
            if (strcmp(w[1], link_names[k]) == 0)
                return read_number(w[2], &f->links[k].seconds) && read_number(w[3], &f->links[k].bytes_per_second);
    }
    return false;
}

/* Clears what a rejected file left in f. */
static void clear(tgc_cost_file *f) {
    tgc_strmap_release(&f->index);
    f->n = 0;
    memset(&f->peaks, 0, sizeof f->peaks);
    memset(f->links, 0, sizeof f->links);
}

static void load(tgc_cost_file *f) {
    FILE *in = fopen(f->path, "rb");
    if (in == NULL) return;
    char *line = tgc_malloc(MAX_LINE + 2);
    bool ok = line != NULL, ended = false;
    int64_t total = 0;
    for (int index = 0; ok && fgets(line, MAX_LINE + 2, in) != NULL; index++) {
        size_t len = strlen(line);
        total += (int64_t)len;
        /* a line too long, without its newline (cut short), or with a NUL inside */
        if (len == 0 || line[len - 1] != '\n' || total > MAX_FILE_BYTES) ok = false;
        else {
            line[len - 1] = '\0';
            ok = strlen(line) == len - 1 && read_line(f, line, index, &ended);
        }
    }
    if (!ended || ferror(in)) ok = false;
    fclose(in);
    tgc_free(line);
    if (!ok) {
        clear(f);
        f->dirty = true; /* rebuilt at the next save */
    }
}

tgc_cost_file *tgc_cost_file_open(const char *identity, bool refresh) {
    tgc_cost_file *f = tgc_calloc(1, sizeof *f);
    if (f == NULL) return NULL;
    snprintf(f->identity, sizeof f->identity, "%s", identity);
    for (char *p = f->identity; *p; p++)
        if ((unsigned char)*p < ' ' || (unsigned char)*p >= 0x7f) *p = '?';
    char dir[1024];
    if (tgc_cache_dir(NULL, dir, sizeof dir)) {
        snprintf(f->path, sizeof f->path, "%s/cost-%016" PRIx64 ".txt", dir, fnv(f->identity));
        if (!refresh) load(f); /* refreshed: replaced at the first save after a figure is measured */
    }
    return f;
}

double tgc_cost_file_get(const tgc_cost_file *f, const char *key) {
    int32_t i = tgc_strmap_get(&f->index, key);
    return i >= 0 ? f->seconds[i] : -1.0;
}

tgc_status tgc_cost_file_put(tgc_cost_file *f, const char *key, double seconds) {
    int32_t i = tgc_strmap_get(&f->index, key);
    if (i < 0) {
        if (f->n == f->cap) {
            size_t cap = f->cap ? f->cap * 2 : 64;
            double *s = tgc_realloc(f->seconds, cap * sizeof *s);
            if (s == NULL) return TGC_ERR_NOMEM;
            f->seconds = s;
            f->cap = cap;
        }
        if (tgc_strmap_put(&f->index, key, (int32_t)f->n) != TGC_OK) return TGC_ERR_NOMEM;
        i = (int32_t)f->n++;
    }
    f->seconds[i] = seconds;
    f->dirty = true;
    return TGC_OK;
}

tgc_status tgc_cost_file_save(tgc_cost_file *f) {
    if (!f->dirty || f->path[0] == '\0') return TGC_OK;
    char tmp[1300];
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", f->path, (long)getpid());
    FILE *out = fopen(tmp, "wb");
    if (out == NULL) return TGC_ERR_RUNTIME;
    int64_t lines = 0;
    fprintf(out, "%s\nid %s\n", MAGIC, f->identity);
    if (f->peaks.flops > 0 && f->peaks.bytes > 0 && f->peaks.node_seconds > 0) {
        fprintf(out, "peaks %a %a %a\n", f->peaks.flops, f->peaks.bytes, f->peaks.node_seconds);
        lines++;
    }
    for (int k = 0; k < COST_LINK_COUNT; k++)
        if (f->links[k].seconds > 0 && f->links[k].bytes_per_second > 0) {
            fprintf(out, "link %s %a %a\n", link_names[k], f->links[k].seconds, f->links[k].bytes_per_second);
            lines++;
        }
    /* in the order the map keeps its keys: by hash, the same for the same keys */
    for (size_t s = 0; s < f->index.cap; s++)
        if (f->index.keys[s] != NULL) {
            fprintf(out, "node %a %s\n", f->seconds[f->index.values[s]], f->index.keys[s]);
            lines++;
        }
    fprintf(out, "end %" PRId64 "\n", lines);
    bool ok = !ferror(out);
    ok = fclose(out) == 0 && ok;
    if (!ok || rename(tmp, f->path) != 0) {
        unlink(tmp);
        return TGC_ERR_RUNTIME;
    }
    f->dirty = false;
    return TGC_OK;
}

void tgc_cost_file_free(tgc_cost_file *f) {
    if (f == NULL) return;
    tgc_strmap_release(&f->index);
    tgc_strmap_release(&f->failed);
    tgc_free(f->seconds);
    tgc_free(f);
}
