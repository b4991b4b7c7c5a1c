/* CUnit runner shared by every suite; see harness.h. */
#include "tests/harness.h"

#include "support/alloc.h"
#include "tgc.h"

#include <CUnit/Basic.h>
#include <stdio.h>
#include <string.h>

#ifndef TGC_SOURCE_DIR
#error "TGC_SOURCE_DIR must be defined by the build"
#endif

const char *tgc_test_source_dir(void) { return TGC_SOURCE_DIR; }

bool tgc_test_has_opencl_device(void) {
    tgc_device_info info[2];
    return tgc_devices_list(info, 2) > 1;
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
