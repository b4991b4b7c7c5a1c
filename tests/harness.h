/* The test harness: each tests/<stage>/test_<topic>.c is one CUnit suite in
 * its own executable, registered with ctest by tests/CMakeLists.txt.
 *
 * Example usage:
 *     static void test_adds(void) { CU_ASSERT_EQUAL(1 + 1, 2); }
 *     TGC_TEST_MAIN("arith", {"adds", test_adds})
 *
 * After the suite the harness asserts that no host block allocated through
 * tgc_malloc is still live: every test must release what it created. */
#ifndef TGC_TESTS_HARNESS_H
#define TGC_TESTS_HARNESS_H

#include <CUnit/CUnit.h>
#include "tgc.h"

#include <stdbool.h>

typedef struct tgc_test_case {
    const char *name;
    void (*fn)(void);
} tgc_test_case;

/* Runs `cases` (ended by {NULL, NULL}) as suite `suite`; returns the process
 * exit code: 0 when every assertion held and no host block leaked. */
int tgc_test_run(const char *suite, const tgc_test_case *cases);

/* The repository root (for tests/data/...), set at build time. */
const char *tgc_test_source_dir(void);

/* Returns a static buffer holding SOURCE_DIR "/" rel. */
const char *tgc_test_path(const char *rel);

/* Whether OpenCL offers a device here (tgc_devices_list lists a gpu0).
 * A gpu test may skip only when it is false: where a device exists but
 * will not open (its kernels fail to build, say), the test must fail. */
bool tgc_test_has_opencl_device(void);

/* Device `name`'s row of tgc_memory_devices ("cpu0", "gpu0"), or a zeroed
 * row when the process has no such device open. */
tgc_memory_device tgc_test_device_memory(const char *name);

/* Makes a scratch folder the process's XDG_CACHE_HOME (its name into dir,
 * size bytes), so that the cost model starts from no measured figures and
 * writes none where the user's runs read them; the caller's OpenCL
 * programs are linked into it (a gpu0 opens from the warm cache, not in
 * the minute PoCL takes to build them all; a program written there
 * replaces its link, never the caller's file). The settings are read
 * again. False when the folder cannot be made. */
bool tgc_test_scratch_cache(char *dir, size_t size);

/* Removes folder dir of tgc_test_scratch_cache and what was written in it;
 * XDG_CACHE_HOME back to the caller's, or unset when it had none; the
 * settings read again. */
void tgc_test_scratch_cache_remove(const char *dir);

#define TGC_TEST_MAIN(suite, ...)                                                           \
    int main(void) {                                                                        \
        static const tgc_test_case cases[] = {__VA_ARGS__, {NULL, NULL}};                  \
        return tgc_test_run(suite, cases);                                                  \
    }

#endif
