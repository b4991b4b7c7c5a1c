/* --input-dir's entries (see run_inputs.h): read once, sorted by stem. */
#include "tools/run_inputs.h"

#include "tools/cli.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct entry {
    char *stem;
    bool folder;
} entry;

static int by_stem(const void *a, const void *b) { return strcmp(((const entry *)a)->stem, ((const entry *)b)->stem); }

static bool ends_with_npy(const char *name) {
    size_t n = strlen(name);
    return n > 4 && strcmp(name + n - 4, ".npy") == 0;
}

/* Classifies DIR/name: a folder, a .npy file, or an error (printed). */
static int classify(const char *dir, const char *name, bool *folder) {
    char path[4096];
    int n = snprintf(path, sizeof path, "%s/%s", dir, name);
    struct stat sb;
    if (n < 0 || (size_t)n >= sizeof path || stat(path, &sb) != 0) {
        fprintf(stderr, "tgc: error: --input-dir: cannot read '%s/%s': %s\n", dir, name,
                n < 0 || (size_t)n >= sizeof path ? "path too long" : strerror(errno));
        return TGC_EXIT_USAGE;
    }
    *folder = S_ISDIR(sb.st_mode);
    if (*folder || (S_ISREG(sb.st_mode) && ends_with_npy(name))) return TGC_EXIT_OK;
    fprintf(stderr, "tgc: error: --input-dir: '%s' is neither a folder of NAME.npy files nor a .npy file\n", path);
    return TGC_EXIT_USAGE;
}

/* Appends an entry, growing the array (sizes checked). */
static int push(entry **all, int *count, int *cap, char *stem, bool folder) {
    if (stem == NULL) return TGC_EXIT_FAILED;
    if (*count == *cap) {
        if (*cap > INT32_MAX / 2 || (size_t)*cap * 2 > SIZE_MAX / sizeof **all) {
            free(stem);
            return TGC_EXIT_FAILED;
        }
        int ncap = *cap ? *cap * 2 : 64;
        entry *grown = realloc(*all, (size_t)ncap * sizeof *grown);
        if (grown == NULL) {
            free(stem);
            return TGC_EXIT_FAILED;
        }
        *all = grown;
        *cap = ncap;
    }
    (*all)[(*count)++] = (entry){stem, folder};
    return TGC_EXIT_OK;
}

static int read_entries(const char *dir, entry **all, int *count, bool *any_file) {
    DIR *d = opendir(dir);
    if (d == NULL) {
        fprintf(stderr, "tgc: error: --input-dir: cannot open '%s': %s\n", dir, strerror(errno));
        return TGC_EXIT_USAGE;
    }
    int cap = 0, rc = TGC_EXIT_OK;
    for (struct dirent *e; rc == TGC_EXIT_OK && (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.') continue;
        bool folder = false;
        if ((rc = classify(dir, e->d_name, &folder)) != TGC_EXIT_OK) break;
        *any_file |= !folder;
        size_t len = strlen(e->d_name) - (folder ? 0 : 4);
        rc = push(all, count, &cap, strndup(e->d_name, len), folder);
    }
    closedir(d);
    return rc;
}

int tgc_input_dir_list(const char *dir, int streamed, tgc_input_dir *out) {
    *out = (tgc_input_dir){.dir = dir};
    entry *all = NULL;
    int count = 0;
    bool any_file = false;
    int rc = read_entries(dir, &all, &count, &any_file);
    if (rc == TGC_EXIT_OK && count == 0) {
        fprintf(stderr, "tgc: error: --input-dir: '%s' holds no inputs (a folder or a .npy file per step)\n", dir);
        rc = TGC_EXIT_USAGE;
    }
    if (rc == TGC_EXIT_OK && any_file && streamed != 1) {
        fprintf(stderr,
                "tgc: error: --input-dir: a .npy entry feeds the one graph input not given by --input, but %d "
                "are left; give each step a folder of NAME.npy files\n",
                streamed);
        rc = TGC_EXIT_USAGE;
    }
    if (rc == TGC_EXIT_OK) qsort(all, (size_t)count, sizeof *all, by_stem);
    for (int i = 1; rc == TGC_EXIT_OK && i < count; i++)
        if (strcmp(all[i - 1].stem, all[i].stem) == 0) {
            fprintf(stderr, "tgc: error: --input-dir: '%s' and '%s.npy' in '%s' would be one step\n", all[i].stem,
                    all[i].stem, dir);
            rc = TGC_EXIT_USAGE;
        }
    if (rc == TGC_EXIT_OK) {
        out->stems = calloc((size_t)count, sizeof *out->stems);
        out->is_folder = calloc((size_t)count, sizeof *out->is_folder);
        if (out->stems == NULL || out->is_folder == NULL) rc = TGC_EXIT_FAILED;
    }
    for (int i = 0; i < count; i++) {
        if (rc == TGC_EXIT_OK) {
            out->stems[i] = all[i].stem;
            out->is_folder[i] = all[i].folder;
        } else {
            free(all[i].stem);
        }
    }
    free(all);
    if (rc == TGC_EXIT_OK) out->count = count;
    else tgc_input_dir_free(out);
    return rc;
}

const char *tgc_input_dir_path(const tgc_input_dir *in, int i, const char *input, char *buf, size_t size) {
    int n;
    if (!in->is_folder[i]) {
        n = snprintf(buf, size, "%s/%s.npy", in->dir, in->stems[i]);
        return n >= 0 && (size_t)n < size ? buf : NULL;
    }
    char stem[256];
    tgc_file_stem(input, stem, sizeof stem);
    n = snprintf(buf, size, "%s/%s/%s.npy", in->dir, in->stems[i], stem);
    return n >= 0 && (size_t)n < size ? buf : NULL;
}

void tgc_input_dir_free(tgc_input_dir *in) {
    for (int i = 0; in->stems != NULL && i < in->count; i++) free(in->stems[i]);
    free(in->stems);
    free(in->is_folder);
    *in = (tgc_input_dir){0};
}
