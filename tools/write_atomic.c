/* Atomic output files: write beside, then rename. */
#include "tools/cli.h"

#include "support/special_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int tgc_write_atomically(const char *path, int (*write)(FILE *f, void *ctx), void *ctx) {
    if (tgc_path_is_device(path)) { /* /dev/null: written in place, never replaced by a rename */
        FILE *f = fopen(path, "wb");
        if (f == NULL) return errno;
        int err = write(f, ctx);
        if (fclose(f) != 0 && err == 0) err = errno ? errno : EIO;
        return err;
    }
    size_t len = strlen(path);
    char *tmp = malloc(len + 16);
    if (tmp == NULL) return ENOMEM;
    snprintf(tmp, len + 16, "%s.tmpXXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        int err = errno;
        free(tmp);
        return err;
    }
    FILE *f = fdopen(fd, "wb");
    int err = f ? write(f, ctx) : errno;
    if (f != NULL && fclose(f) != 0 && err == 0) err = errno ? errno : EIO;
    if (f == NULL) close(fd);
    if (err == 0 && rename(tmp, path) != 0) err = errno;
    if (err != 0) unlink(tmp);
    free(tmp);
    return err;
}
