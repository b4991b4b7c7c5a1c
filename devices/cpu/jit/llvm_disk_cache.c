/* The JIT's object files on disk (devices/cpu/jit/llvm_jit.h has the
 * contract). A record is
 *     "TGCJIT01"  key length (u64)  object length (u64)  checksum (u64)
 *     the key     the object code
 * (integers in the host's byte order: the key names the CPU anyway), the
 * checksum FNV-1a over the key and then the object. Reading trusts
 * nothing: the lengths must add up to the file's size within fixed
 * limits, the key must be ours byte for byte, the checksum must hold. */
#include "devices/cpu/jit/llvm_jit.h"

#include "support/cache_dir.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC "TGCJIT01"
#define HEADER_BYTES 32
#define MAX_KEY_BYTES ((uint64_t)1 << 20)
#define MAX_OBJ_BYTES ((uint64_t)64 << 20)

uint64_t tgc_jit_fnv1a(uint64_t h, const void *data, size_t n) {
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

static uint64_t checksum(const char *key, size_t key_len, const char *obj, size_t obj_len) {
    return tgc_jit_fnv1a(tgc_jit_fnv1a(0xcbf29ce484222325ull, key, key_len), obj, obj_len);
}

static bool record_path(const char *hex, char *path, size_t size) {
    char dir[PATH_MAX - 64];
    if (!tgc_cache_dir("jit", dir, sizeof dir)) return false;
    int n = snprintf(path, size, "%s/%s.o", dir, hex);
    return n > 0 && (size_t)n < size;
}

static uint64_t read_u64(const unsigned char *p) {
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

bool tgc_jit_disk_load(const char *hex, const char *key, char **obj, size_t *obj_len, bool *rejected) {
    *obj = NULL;
    *obj_len = 0;
    *rejected = false;
    char path[PATH_MAX];
    if (!record_path(hex, path, sizeof path)) return false;
    FILE *f = fopen(path, "rb");
    if (f == NULL) return false;
    *rejected = true;
    unsigned char head[HEADER_BYTES];
    size_t key_len = strlen(key);
    char *key_read = NULL, *body = NULL;
    bool ok = false;
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && fread(head, 1, sizeof head, f) == sizeof head &&
        memcmp(head, MAGIC, 8) == 0) {
        uint64_t kl = read_u64(head + 8), ol = read_u64(head + 16), sum = read_u64(head + 24);
        if (kl == key_len && kl <= MAX_KEY_BYTES && ol > 0 && ol <= MAX_OBJ_BYTES &&
            (uint64_t)st.st_size == HEADER_BYTES + kl + ol) {
            key_read = malloc(kl + 1);
            body = malloc(ol);
            if (key_read != NULL && body != NULL && fread(key_read, 1, kl, f) == kl && fread(body, 1, ol, f) == ol &&
                memcmp(key_read, key, kl) == 0 && checksum(key_read, kl, body, ol) == sum) {
                *obj = body;
                *obj_len = (size_t)ol;
                body = NULL;
                ok = true;
                *rejected = false;
            }
        }
    }
    fclose(f);
    free(key_read);
    free(body);
    return ok;
}

void tgc_jit_disk_store(const char *hex, const char *key, const char *obj, size_t obj_len) {
    char path[PATH_MAX], tmp[PATH_MAX + 32];
    if (!record_path(hex, path, sizeof path)) return;
    int n = snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    if (n < 0 || (size_t)n >= sizeof tmp) return;
    FILE *f = fopen(tmp, "wb");
    if (f == NULL) return;
    size_t key_len = strlen(key);
    unsigned char head[HEADER_BYTES];
    uint64_t kl = key_len, ol = obj_len, sum = checksum(key, key_len, obj, obj_len);
    memcpy(head, MAGIC, 8);
    memcpy(head + 8, &kl, 8);
    memcpy(head + 16, &ol, 8);
    memcpy(head + 24, &sum, 8);
    bool ok = fwrite(head, 1, sizeof head, f) == sizeof head && fwrite(key, 1, key_len, f) == key_len &&
              fwrite(obj, 1, obj_len, f) == obj_len;
    ok = fclose(f) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) remove(tmp);
}
