/* support/settings.h: each kind's parsing (a switch, a bounded number, a
 * text), snapshots that never change once read, the process's newest one
 * following the latest read, and README.md's table listing exactly the
 * rows of support/settings.def. */
#include "tests/harness.h"

#include "support/settings.h"

#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The variables the cases set; unset again by each case. */
static void unset_all(void) {
    unsetenv("TGC_JIT");
    unsetenv("TGC_ARENA");
    unsetenv("TGC_SPIN_US");
    unsetenv("TGC_FAIL_NODE");
    tgc_settings_read();
}

/* SWITCH: unset or empty is the default, "0" off, anything else on. */
static void test_switch(void) {
    unset_all();
    const tgc_settings *s = tgc_settings_read();
    CU_ASSERT_EQUAL(s->jit, 1);
    CU_ASSERT_EQUAL(s->arena, -1); /* the device kind decides */
    static const struct {
        const char *value;
        int jit, arena;
    } cases[] = {{"", 1, -1}, {"0", 0, 0}, {"1", 1, 1}, {"yes", 1, 1}, {"00", 1, 1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        setenv("TGC_JIT", cases[i].value, 1);
        setenv("TGC_ARENA", cases[i].value, 1);
        s = tgc_settings_read();
        CU_ASSERT_EQUAL(s->jit, cases[i].jit);
        CU_ASSERT_EQUAL(s->arena, cases[i].arena);
    }
    unset_all();
}

/* INT: a whole decimal number in the row's range, else the default. */
static void test_int(void) {
    unset_all();
    CU_ASSERT_EQUAL(tgc_settings_read()->spin_us, 50);
    static const struct {
        const char *value;
        int64_t want;
    } cases[] = {{"0", 0},   {"7", 7},    {"1000000000", 1000000000}, {"1000000001", 50}, {"-1", 50},
                 {"", 50},   {"12x", 50}, {"x", 50},                  {"99999999999999999999", 50}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        setenv("TGC_SPIN_US", cases[i].value, 1);
        CU_ASSERT_EQUAL(tgc_settings_read()->spin_us, cases[i].want);
    }
    unset_all();
}

/* TEXT: the value itself, NULL when unset or empty. */
static void test_text(void) {
    unset_all();
    CU_ASSERT_PTR_NULL(tgc_settings_read()->fail_node);
    setenv("TGC_FAIL_NODE", "", 1);
    CU_ASSERT_PTR_NULL(tgc_settings_read()->fail_node);
    setenv("TGC_FAIL_NODE", "layer1/conv 2", 1);
    const tgc_settings *s = tgc_settings_read();
    CU_ASSERT_PTR_NOT_NULL_FATAL(s->fail_node);
    CU_ASSERT_STRING_EQUAL(s->fail_node, "layer1/conv 2");
    unset_all();
}

/* A snapshot keeps what it read whatever the environment does after; an
 * environment read before gives back its snapshot; the process's newest
 * is the latest read's. */
static void test_snapshots(void) {
    unset_all();
    setenv("TGC_FAIL_NODE", "b", 1);
    const tgc_settings *with = tgc_settings_read();
    CU_ASSERT_PTR_EQUAL(tgc_settings_current(), with);
    unsetenv("TGC_FAIL_NODE");
    CU_ASSERT_PTR_EQUAL(tgc_settings_current(), with); /* not read again until asked */
    const tgc_settings *without = tgc_settings_read();
    CU_ASSERT_PTR_NOT_EQUAL(without, with);
    CU_ASSERT_PTR_NULL(without->fail_node);
    CU_ASSERT_STRING_EQUAL(with->fail_node, "b"); /* unchanged */
    CU_ASSERT_PTR_EQUAL(tgc_settings_current(), without);
    CU_ASSERT_PTR_EQUAL(tgc_settings_read(), without); /* the same environment: the same snapshot */
    setenv("TGC_FAIL_NODE", "b", 1);
    CU_ASSERT_PTR_EQUAL(tgc_settings_read(), with);
    unset_all();
}

/* README.md's "Environment" table: one row per variable of settings.def,
 * its name alone in backquotes in the first cell, and no other rows. */
static void test_readme_lists_every_setting(void) {
    static const char *const names[] = {
#define TGC_SETTING(NAME, field, KIND, DEFAULT, LO, HI) #NAME,
#include "support/settings.def"
#undef TGC_SETTING
    };
    enum { N = sizeof names / sizeof names[0] };
    int rows[N] = {0}, other = 0;
    FILE *f = fopen(tgc_test_path("README.md"), "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    char line[4096];
    bool in_table = false, found = false;
    while (fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "| Variable |", 12) == 0) {
            CU_ASSERT(!found); /* one such table */
            in_table = found = true;
            continue;
        }
        if (!in_table) continue;
        if (line[0] != '|') {
            in_table = false;
            continue;
        }
        if (strncmp(line, "|--", 3) == 0 || strncmp(line, "| --", 4) == 0 || strncmp(line, "|:-", 3) == 0) continue;
        char name[128];
        int k = -1;
        if (sscanf(line, "| `%127[A-Z_]` |", name) == 1)
            for (int i = 0; i < N; i++)
                if (strcmp(name, names[i]) == 0) k = i;
        if (k >= 0) rows[k]++;
        else {
            other++;
            printf("\n  README.md's table has a row for no setting: %s", line);
        }
    }
    fclose(f);
    CU_ASSERT(found);
    CU_ASSERT_EQUAL(other, 0);
    for (int i = 0; i < N; i++) {
        if (rows[i] != 1) printf("\n  README.md's table lists %s %d times", names[i], rows[i]);
        CU_ASSERT_EQUAL(rows[i], 1);
    }
}

TGC_TEST_MAIN("settings", {"a switch", test_switch}, {"a number in a range", test_int}, {"a text", test_text},
              {"snapshots", test_snapshots}, {"README.md lists every setting", test_readme_lists_every_setting})
