/* Every file in tests/data/bad/ breaks one or more rules of the tgc/1
 * format. Each states what the loader must say in comment lines
 *     # expect: LINE:COL RULE [text the message must contain]
 * (and, optionally, the load limits to use: `# load-limits: SPEC`, as
 * --load-limits takes it) and this suite checks that loading fails and that the errors are exactly
 * those, in that order: same positions, same rules. */
#include "tests/harness.h"

#include "support/alloc.h"
#include "tgc.h"

#include <CUnit/CUnit.h>
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_EXPECT 16

typedef struct expectation {
    int line, col;
    char rule[64];
    char text[256];
} expectation;

static int read_expectations(const char *path, expectation *out) {
    FILE *f = fopen(path, "r");
    if (f == NULL) return -1;
    char line[512];
    int n = 0;
    while (fgets(line, sizeof line, f) != NULL && n < MAX_EXPECT) {
        const char *p = strstr(line, "# expect: ");
        if (p == NULL) continue;
        expectation *e = &out[n];
        int used = 0;
        e->text[0] = '\0';
        if (sscanf(p + 10, "%d:%d %63s %n", &e->line, &e->col, e->rule, &used) < 3) continue;
        snprintf(e->text, sizeof e->text, "%s", p + 10 + used);
        e->text[strcspn(e->text, "\n")] = '\0';
        n++;
    }
    fclose(f);
    return n;
}

/* The text after `key` on the first line holding it, trimmed; false when
 * no line does. */
static bool read_directive(const char *path, const char *key, char *out, size_t size) {
    FILE *f = fopen(path, "r");
    if (f == NULL) return false;
    char line[512];
    bool found = false;
    while (!found && fgets(line, sizeof line, f) != NULL) {
        const char *p = strstr(line, key);
        if (p == NULL) continue;
        snprintf(out, size, "%s", p + strlen(key));
        out[strcspn(out, " \n")] = '\0';
        found = true;
    }
    fclose(f);
    return found;
}

static int compare_names(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void check_file(const char *dir, const char *name, int *files) {
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    expectation want[MAX_EXPECT];
    int n_want = read_expectations(path, want);
    CU_ASSERT_FATAL(n_want > 0);
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    tgc_graph_load_options opts = {0};
    char limits[256];
    if (read_directive(path, "# load-limits: ", limits, sizeof limits))
        CU_ASSERT_EQUAL_FATAL(tgc_load_limits_parse(limits, &opts, d), TGC_OK);
    tgc_status s = tgc_graph_load_with(path, &opts, d, &g);
    CU_ASSERT_NOT_EQUAL(s, TGC_OK);
    CU_ASSERT_PTR_NULL(g);
    size_t n_got = tgc_diags_error_count(d);
    bool same = n_got == (size_t)n_want;
    for (size_t i = 0, k = 0; same && i < tgc_diags_count(d); i++) {
        if (tgc_diag_severity(d, i) != TGC_SEV_ERROR) continue;
        const expectation *e = &want[k++];
        same = tgc_diag_line(d, i) == e->line && tgc_diag_column(d, i) == e->col &&
               strcmp(tgc_diag_rule(d, i), e->rule) == 0 && strstr(tgc_diag_message(d, i), e->text) != NULL &&
               strcmp(tgc_diag_file(d, i), path) == 0;
    }
    if (!same) {
        fprintf(stderr, "\n%s: expected\n", name);
        for (int k = 0; k < n_want; k++)
            fprintf(stderr, "  %d:%d %s %s\n", want[k].line, want[k].col, want[k].rule, want[k].text);
        fprintf(stderr, "got\n");
        tgc_diags_print(d, stderr);
    }
    CU_ASSERT(same);
    tgc_graph_free(g);
    tgc_diags_free(d);
    (*files)++;
}

static void test_every_bad_graph_gets_its_errors(void) {
    const char *dir = tgc_test_path("tests/data/bad");
    char dir_copy[1024];
    snprintf(dir_copy, sizeof dir_copy, "%s", dir);
    DIR *dp = opendir(dir_copy);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dp);
    char *names[512];
    int count = 0;
    struct dirent *ent;
    while ((ent = readdir(dp)) != NULL && count < 512) {
        size_t len = strlen(ent->d_name);
        if (len > 5 && strcmp(ent->d_name + len - 5, ".yaml") == 0) names[count++] = strdup(ent->d_name);
    }
    closedir(dp);
    qsort(names, (size_t)count, sizeof names[0], compare_names);
    int files = 0;
    for (int i = 0; i < count; i++) {
        check_file(dir_copy, names[i], &files);
        free(names[i]);
    }
    printf("\n  %d malformed graph files checked\n", files);
    CU_ASSERT(files >= 40);
}

/* Out of memory at every allocation of loading a bad graph: a clean status,
 * never a crash or a leak (the harness checks the leak). One file for each
 * stage that reports: the loader, validation, inference, .npy reading. */
static void load_survives_every_allocation_failure(const char *name) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", tgc_test_path("tests/data/bad"), name);
    /* Count the allocations of one undisturbed load, then fail each in turn. */
    int64_t before = tgc_host_alloc_stats_get().num_allocs;
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    CU_ASSERT_EQUAL(tgc_graph_load(path, d, &g), TGC_ERR_INVALID);
    tgc_diags_free(d);
    int64_t total = tgc_host_alloc_stats_get().num_allocs - before;
    CU_ASSERT(total > 10);
    for (int64_t n = 1; n <= total; n++) {
        tgc_host_alloc_fail_nth(n + 1); /* +1: the diags list itself comes first */
        d = tgc_diags_create();
        tgc_status s = tgc_graph_load(path, d, &g);
        tgc_host_alloc_fail_nth(0);
        CU_ASSERT(s == TGC_ERR_NOMEM || s == TGC_ERR_INVALID);
        CU_ASSERT_PTR_NULL(g);
        tgc_diags_free(d);
    }
}

static void test_load_survives_every_allocation_failure(void) {
    static const char *const files[] = {"dangling_input.yaml", "multi_error_loader.yaml",
                                        "multi_error_validation.yaml", "multi_error_inference.yaml",
                                        "npy_shape_mismatch.yaml", "tensor_attr_value_count.yaml",
                                        "subgraph_error_inside.yaml", "rank_unknown_no_valid_rank.yaml",
                                        "subgraph_dangling_outer.yaml"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) load_survives_every_allocation_failure(files[i]);
}

TGC_TEST_MAIN("bad graphs", {"every bad graph gets its errors", test_every_bad_graph_gets_its_errors},
              {"load survives every allocation failure", test_load_survives_every_allocation_failure})
