/* The OpenCL device: discovery, errors that list the devices, buffers and
 * copies, the program cache (a second start compiles nothing), build
 * failures that name the file and show the log, and OpenCL objects counted
 * back to zero. Runs on whatever OpenCL device is there (PoCL in CI); with
 * none, it checks the "no platform" error and stops. */
#include "tests/harness.h"

#include "devices/opencl/cl_program.h"
#include "devices/opencl/cl_sources.h"
#include "support/alloc.h"
#include "support/settings.h"

#include <CUnit/CUnit.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int gpu_count(void) {
    tgc_cl_info infos[16];
    int n = 0;
    tgc_cl_list(infos, 16, &n);
    return n;
}

static char cache_root[256];

static void remove_cache(void) {
    if (cache_root[0] == '\0') return;
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache_root);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", cache_root);
    cache_root[0] = '\0';
}

/* A fresh, empty cache directory for this process, removed at exit. */
static void use_empty_cache(void) {
    static bool removed_at_exit = false;
    if (!removed_at_exit) removed_at_exit = atexit(remove_cache) == 0;
    remove_cache();
    snprintf(cache_root, sizeof cache_root, "/tmp/tgc-cache-test-XXXXXX");
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(cache_root));
    setenv("XDG_CACHE_HOME", cache_root, 1);
    tgc_settings_read(); /* as a session would when made: the devices below are made directly */
}

/* The suite's scratch cache, as earlier tests left it (made empty if there
 * is none yet). Tests that need a device but not an empty cache share it:
 * compiling every program again costs half a minute under AddressSanitizer. */
static void use_scratch_cache(void) {
    if (cache_root[0] == '\0') use_empty_cache();
}

static void test_missing_device_lists_the_devices(void) {
    tgc_diags *d = tgc_diags_create();
    tgc_device *dev = NULL;
    int n = gpu_count();
    CU_ASSERT_EQUAL(tgc_cl_device_create(n, d, &dev), TGC_ERR_INVALID);
    CU_ASSERT_PTR_NULL(dev);
    CU_ASSERT_EQUAL(tgc_diags_error_count(d), 1);
    char want[32];
    snprintf(want, sizeof want, "'gpu%d' is not available", n);
    CU_ASSERT_PTR_NOT_NULL(strstr(tgc_diag_message(d, 0), want));
    CU_ASSERT_PTR_NOT_NULL(strstr(tgc_diag_message(d, 0), "devices: cpu"));
    if (n > 0) CU_ASSERT_PTR_NOT_NULL(strstr(tgc_diag_message(d, 0), "gpu0 ("));
    tgc_diags_free(d);
}

static void test_second_start_compiles_nothing(void) {
    if (gpu_count() == 0) return;
    use_empty_cache();
    tgc_diags *d = tgc_diags_create();
    tgc_device *first = NULL, *second = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_cl_device_create(0, d, &first), TGC_OK);
    tgc_cl_counters a = tgc_cl_device_counters(first);
    int files = 0;
    for (const tgc_cl_source *s = tgc_cl_sources; s->name != NULL; s++) files++;
    CU_ASSERT_EQUAL(a.program_builds, files);
    CU_ASSERT_EQUAL(a.cache_loads, 0);
    CU_ASSERT_EQUAL(a.programs, files);
    CU_ASSERT_EQUAL_FATAL(tgc_cl_device_create(0, d, &second), TGC_OK);
    tgc_cl_counters b = tgc_cl_device_counters(second);
    CU_ASSERT_EQUAL(b.program_builds, 0);
    CU_ASSERT_EQUAL(b.cache_loads, files);
    printf("\n  %d programs: first start built %lld, second start built %lld and loaded %lld from the cache\n", files,
           (long long)a.program_builds, (long long)b.program_builds, (long long)b.cache_loads);
    tgc_device_destroy(first);
    tgc_device_destroy(second);
    tgc_diags_free(d);
}

static void test_build_failure_names_the_file_and_shows_the_log(void) {
    if (gpu_count() == 0) return;
    use_scratch_cache();
    tgc_diags *d = tgc_diags_create();
    tgc_device *dev = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_cl_device_create(0, d, &dev), TGC_OK);
    static const char bad[] = "__kernel void broken(__global float *x) { x[0] = undeclared_thing; }\n";
    tgc_cl_source src = {"broken.cl", bad, sizeof bad - 1};
    cl_program p = NULL;
    CU_ASSERT_EQUAL(tgc_cl_program_build((tgc_cl_device *)dev, &src, d, &p), TGC_ERR_RUNTIME);
    CU_ASSERT_PTR_NULL(p);
    CU_ASSERT_EQUAL_FATAL(tgc_diags_error_count(d), 1);
    const char *msg = tgc_diag_message(d, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "devices/opencl/kernels/broken.cl"));
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "CL_BUILD_PROGRAM_FAILURE"));
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "undeclared_thing")); /* the compiler's own log */
    tgc_device_destroy(dev);
    tgc_diags_free(d);
}

static void test_buffers_round_trip_and_are_counted(void) {
    if (gpu_count() == 0) return;
    use_scratch_cache();
    tgc_diags *d = tgc_diags_create();
    tgc_device *dev = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_cl_device_create(0, d, &dev), TGC_OK);
    tgc_cl_counters start = tgc_cl_device_counters(dev);
    float host[1000], back[1000];
    for (int i = 0; i < 1000; i++) host[i] = (float)i * 0.5f - 7;
    tgc_buffer *b[3];
    for (int k = 0; k < 3; k++) CU_ASSERT_EQUAL_FATAL(tgc_buffer_alloc(dev, sizeof host, &b[k]), TGC_OK);
    CU_ASSERT_EQUAL(tgc_cl_device_counters(dev).mems, start.mems + 3);
    CU_ASSERT_EQUAL(tgc_device_stats(dev).bytes_in_use, 3 * (int64_t)sizeof host);
    CU_ASSERT_EQUAL(dev->ops->copy_from_host(dev, b[1]->mem, 0, host, sizeof host), TGC_OK);
    memset(back, 0, sizeof back);
    CU_ASSERT_EQUAL(dev->ops->copy_to_host(dev, back, b[1]->mem, 0, sizeof back), TGC_OK);
    CU_ASSERT_EQUAL(memcmp(host, back, sizeof host), 0);
    CU_ASSERT_PTR_NULL(tgc_buffer_host_ptr(b[1])); /* device memory is not host memory */
    for (int k = 0; k < 3; k++) tgc_buffer_release(b[k]);
    tgc_cl_counters end = tgc_cl_device_counters(dev);
    CU_ASSERT_EQUAL(end.mems, start.mems);
    CU_ASSERT_EQUAL(end.events, 0);
    CU_ASSERT_EQUAL(tgc_device_stats(dev).bytes_in_use, 0);
    CU_ASSERT_EQUAL(tgc_device_stats(dev).peak_bytes_in_use, 3 * (int64_t)sizeof host);
    /* A memory limit refuses cleanly. */
    tgc_device_set_limit(dev, 1000);
    tgc_buffer *big = NULL;
    CU_ASSERT_EQUAL(tgc_buffer_alloc(dev, 4000, &big), TGC_ERR_NOMEM);
    CU_ASSERT_PTR_NULL(big);
    CU_ASSERT_EQUAL(tgc_cl_device_counters(dev).mems, start.mems);
    tgc_device_destroy(dev);
    tgc_diags_free(d);
}

static void test_error_names(void) {
    CU_ASSERT_STRING_EQUAL(tgc_cl_error_name(CL_OUT_OF_RESOURCES), "CL_OUT_OF_RESOURCES");
    CU_ASSERT_STRING_EQUAL(tgc_cl_error_name(CL_INVALID_KERNEL_NAME), "CL_INVALID_KERNEL_NAME");
    CU_ASSERT_STRING_EQUAL(tgc_cl_error_name(-1001), "CL_PLATFORM_NOT_FOUND_KHR");
}

TGC_TEST_MAIN("opencl device", {"a missing device lists the devices", test_missing_device_lists_the_devices},
              {"a second start compiles nothing", test_second_start_compiles_nothing},
              {"a build failure names the file and shows the log", test_build_failure_names_the_file_and_shows_the_log},
              {"buffers round trip and are counted", test_buffers_round_trip_and_are_counted},
              {"error names", test_error_names})
