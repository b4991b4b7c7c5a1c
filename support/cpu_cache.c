/* The host cpu's last-level cache (cpu_cache.h). */
#include "support/cpu_cache.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <unistd.h>

static int64_t llc_bytes;
static pthread_once_t llc_once = PTHREAD_ONCE_INIT;

/* Index i's level and size ("32768K") from sysfs; false when it lists none. */
static bool sysfs_cache(int i, int *level, int64_t *bytes) {
    char path[96];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
    FILE *f = fopen(path, "r");
    if (f == NULL) return false;
    bool ok = fscanf(f, "%d", level) == 1;
    fclose(f);
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
    f = ok ? fopen(path, "r") : NULL;
    if (f == NULL) return false;
    long long size = 0;
    char unit = 'B';
    ok = fscanf(f, "%lld%c", &size, &unit) >= 1 && size > 0 && size < (1LL << 40);
    fclose(f);
    *bytes = (int64_t)size * (unit == 'K' ? 1024 : unit == 'M' ? 1048576 : 1);
    return ok;
}

static void read_llc(void) {
    int best_level = 0;
    for (int i = 0; i < 16; i++) {
        int level = 0;
        int64_t bytes = 0;
        if (sysfs_cache(i, &level, &bytes) && level > best_level) best_level = level, llc_bytes = bytes;
    }
    if (llc_bytes > 0) return;
#ifdef _SC_LEVEL3_CACHE_SIZE
    long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE), l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    llc_bytes = l3 > 0 ? l3 : l2 > 0 ? l2 : 0;
#endif
}

int64_t tgc_last_level_cache_bytes(void) {
    pthread_once(&llc_once, read_llc);
    return llc_bytes;
}
