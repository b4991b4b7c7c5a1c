/* Replays fuzz inputs without libFuzzer: every file in the folders given
 * (the seeds, the corpus kept from fuzzing, every input that ever crashed)
 * goes through the target's LLVMFuzzerTestOneInput once, in name order, so
 * `make test` checks them all in the plain and sanitizer builds. A target
 * aborts on a leak; a crash is a crash. Prints the count replayed. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Replays one file; false when it cannot be read. */
static int replay_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) return 0;
    size_t cap = 4096, n = 0;
    uint8_t *buf = malloc(cap);
    size_t got;
    while (buf != NULL && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            uint8_t *bigger = realloc(buf, cap *= 2);
            if (bigger == NULL) free(buf);
            buf = bigger;
        }
    }
    fclose(f);
    if (buf == NULL) return 0;
    LLVMFuzzerTestOneInput(buf, n);
    free(buf);
    return 1;
}

int main(int argc, char **argv) {
    int replayed = 0;
    for (int a = 1; a < argc; a++) {
        DIR *d = opendir(argv[a]);
        if (d == NULL) continue; /* a folder with nothing yet (no crash ever) */
        char **names = NULL;
        size_t n = 0, cap = 0;
        for (struct dirent *e; (e = readdir(d)) != NULL;) {
            if (e->d_name[0] == '.') continue;
            if (n == cap && (names = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof *names)) == NULL) return 1;
            if ((names[n++] = strdup(e->d_name)) == NULL) return 1;
        }
        closedir(d);
        if (n > 1) qsort(names, n, sizeof *names, by_name);
        for (size_t i = 0; i < n; i++) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[a], names[i]);
            replayed += replay_file(path);
            free(names[i]);
        }
        free(names);
    }
    printf("%d inputs replayed\n", replayed);
    return replayed > 0 ? 0 : 1;
}
