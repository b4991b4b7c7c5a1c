/* CUnit runner shared by every suite; see harness.h. */
#include "tests/harness.h"

#include "support/alloc.h"
#include "support/settings.h"
#include "tgc.h"

#include <CUnit/Basic.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef TGC_SOURCE_DIR
#error "TGC_SOURCE_DIR must be defined by the build"
#endif

const char *tgc_test_source_dir(void) { return TGC_SOURCE_DIR; }

bool tgc_test_has_opencl_device(void) {
    tgc_device_info info[2];
    return tgc_devices_list(info, 2) > 1;
}

/* The caller's cache folder (XDG_CACHE_HOME/tgc, else HOME/.cache/tgc)
 * into out, as the process started; false when there is none. */
static bool caller_cache(char *out, size_t size) {
    static char found[1024];
    static int state; /* 0: not looked, 1: found, 2: none */
    if (state == 0) {
        const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
        state = 2;
        if (xdg != NULL && xdg[0] == '/') state = snprintf(found, sizeof found, "%s/tgc", xdg) > 0 ? 1 : 2;
        else if (home != NULL && home[0] == '/')
            state = snprintf(found, sizeof found, "%s/.cache/tgc", home) > 0 ? 1 : 2;
    }
    if (state != 1) return false;
    snprintf(out, size, "%s", found);
    return true;
}

/* The caller's XDG_CACHE_HOME as the process started ("": unset), put
 * back by tgc_test_scratch_cache_remove. */
static char caller_xdg[1024];

bool tgc_test_scratch_cache(char *dir, size_t size) {
    char mine[1024], from[1400], to[1400];
    bool linked = caller_cache(mine, sizeof mine);
    const char *xdg = getenv("XDG_CACHE_HOME");
    if (caller_xdg[0] == '\0' && xdg != NULL && strstr(xdg, "/tgc_test_cache.") == NULL)
        snprintf(caller_xdg, sizeof caller_xdg, "%s", xdg);
    if (snprintf(dir, size, "/tmp/tgc_test_cache.XXXXXX") >= (int)size || mkdtemp(dir) == NULL) return false;
    snprintf(to, sizeof to, "%s/tgc", dir);
    if (mkdir(to, 0755) != 0) {
        rmdir(dir);
        return false;
    }
    DIR *d = linked ? opendir(mine) : NULL;
    for (struct dirent *e; d != NULL && (e = readdir(d)) != NULL;) {
        size_t len = strlen(e->d_name);
        if (len < 4 || strcmp(e->d_name + len - 4, ".bin") != 0) continue;
        snprintf(from, sizeof from, "%s/%s", mine, e->d_name);
        snprintf(to, sizeof to, "%s/tgc/%s", dir, e->d_name);
        if (symlink(from, to) != 0) break;
    }
    if (d != NULL) closedir(d);
    setenv("XDG_CACHE_HOME", dir, 1);
    unsetenv("TGC_COST_REFRESH");
    tgc_settings_read();
    return true;
}

void tgc_test_scratch_cache_remove(const char *dir) {
    char tgc_dir[512], path[1024];
    snprintf(tgc_dir, sizeof tgc_dir, "%s/tgc", dir);
    DIR *d = opendir(tgc_dir);
    for (struct dirent *e; d != NULL && (e = readdir(d)) != NULL;)
        if (e->d_name[0] != '.') {
            snprintf(path, sizeof path, "%s/%s", tgc_dir, e->d_name);
            unlink(path);
        }
    if (d != NULL) closedir(d);
    rmdir(tgc_dir);
    rmdir(dir);
    if (caller_xdg[0] != '\0') setenv("XDG_CACHE_HOME", caller_xdg, 1);
    else unsetenv("XDG_CACHE_HOME");
    tgc_settings_read();
}

tgc_memory_device tgc_test_device_memory(const char *name) {
    tgc_memory_device devs[40], none;
    memset(&none, 0, sizeof none);
    int n = tgc_memory_devices(devs, 40);
    for (int i = 0; i < n && i < 40; i++)
        if (strcmp(devs[i].device, name) == 0) return devs[i];
    return none;
}

const char *tgc_test_path(const char *rel) {
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s/%s", TGC_SOURCE_DIR, rel);
    return buf;
}

int tgc_test_run(const char *suite_name, const tgc_test_case *cases) {
    if (CU_initialize_registry() != CUE_SUCCESS) return 2;
    CU_pSuite suite = CU_add_suite(suite_name, NULL, NULL);
    if (suite == NULL) return 2;
    for (const tgc_test_case *t = cases; t->name != NULL; t++)
        if (CU_add_test(suite, t->name, t->fn) == NULL) return 2;
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
    CU_cleanup_registry();
    tgc_host_alloc_stats s = tgc_host_alloc_stats_get();
    if (s.live_blocks != 0 || s.live_bytes != 0) {
        fprintf(stderr, "%s: %lld host blocks (%lld bytes) still live after the suite\n",
                suite_name, (long long)s.live_blocks, (long long)s.live_bytes);
        failed++;
    }
    return failed == 0 ? 0 : 1;
}
