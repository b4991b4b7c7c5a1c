/* The format's round-trip promise: every dump is itself a valid tgc/1 file,
 * and loading a dump and dumping it again gives the same bytes. Checked
 * over the .yaml files of tests/data/good (small graphs that use every key of the
 * format) and every example under examples/; then a few shapes of
 * examples/digits/cnn.yaml, derived by hand, are looked up in its dump. */
#include "tests/harness.h"

#include "tgc.h"

#include <CUnit/CUnit.h>
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_FILES 256

/* Dumps g into a new malloc'd string (caller frees); NULL on failure. */
static char *dump_to_string(const tgc_graph *g) {
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f == NULL) return NULL;
    tgc_diags *d = tgc_diags_create();
    tgc_status s = tgc_graph_dump_yaml(g, f, NULL, d);
    if (s != TGC_OK) tgc_diags_print(d, stderr);
    tgc_diags_free(d);
    fclose(f);
    if (s != TGC_OK) {
        free(text);
        return NULL;
    }
    return text;
}

/* The `out:` entries that the dump gives node `name`, as one line per
 * entry, into buf; false when the node or its `out` is not in the dump.
 * Relies on the dumper's layout: nodes are block mappings starting
 * "- name: NAME" and `out` is their last key, one flow mapping a line. */
static bool node_out(const char *dump, const char *name, char *buf, size_t size) {
    char head[300];
    snprintf(head, sizeof head, "\n- name: %s\n", name);
    const char *p = strstr(dump, head);
    if (p == NULL) return false;
    p += strlen(head);
    const char *next = strstr(p, "\n- name: ");
    const char *out = strstr(p, "\n  out:\n");
    if (out == NULL || (next != NULL && out > next)) return false;
    p = out + strlen("\n  out:\n");
    size_t used = 0;
    buf[0] = '\0';
    while (strncmp(p, "  - {", 5) == 0) {
        const char *end = strchr(p, '\n');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (used + len - 4 + 2 > size) return false;
        memcpy(buf + used, p + 4, len - 4); /* drop the "  - " */
        used += len - 4;
        buf[used++] = '\n';
        buf[used] = '\0';
        if (end == NULL) break;
        p = end + 1;
    }
    return used > 0;
}

/* Every node name in a dump, in order: the text after each "\n- name: ". */
static int dumped_node_names(const char *dump, char names[][128], int max) {
    int n = 0;
    for (const char *p = strstr(dump, "\n- name: "); p != NULL && n < max; p = strstr(p + 1, "\n- name: ")) {
        const char *s = p + strlen("\n- name: ");
        size_t len = strcspn(s, "\n");
        if (len >= 128) len = 127;
        memcpy(names[n], s, len);
        names[n][len] = '\0';
        n++;
    }
    return n;
}

/* Loads `path`, dumps it, loads the dump (relative .npy paths resolved
 * against the file's directory), dumps again: both loads succeed, and the
 * two dumps are the same bytes, node by node the same inferred shapes. */
static void check_round_trip(const char *path) {
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    tgc_status s = tgc_graph_load(path, d, &g);
    if (s != TGC_OK) {
        fprintf(stderr, "\n%s does not load:\n", path);
        tgc_diags_print(d, stderr);
    }
    CU_ASSERT_EQUAL_FATAL(s, TGC_OK);
    char *first = dump_to_string(g);
    CU_ASSERT_PTR_NOT_NULL_FATAL(first);

    char dir[1024];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash != NULL) *slash = '\0';
    tgc_graph *g2 = NULL;
    s = tgc_graph_load_string(first, strlen(first), "dump.yaml", slash ? dir : ".", d, &g2);
    if (s != TGC_OK) {
        fprintf(stderr, "\nthe dump of %s does not load:\n%s\n", path, first);
        tgc_diags_print(d, stderr);
    }
    CU_ASSERT_EQUAL(s, TGC_OK);
    char *second = g2 ? dump_to_string(g2) : NULL;
    CU_ASSERT_PTR_NOT_NULL(second);
    if (second != NULL) {
        CU_ASSERT_EQUAL(tgc_graph_node_count(g), tgc_graph_node_count(g2));
        /* Shapes first, for a readable failure; then the whole text. */
        static char names[1024][128];
        int n = dumped_node_names(first, names, 1024);
        for (int i = 0; i < n; i++) {
            char a[4096], b[4096];
            bool in_first = node_out(first, names[i], a, sizeof a);
            bool in_second = node_out(second, names[i], b, sizeof b);
            CU_ASSERT(in_first && in_second);
            if (in_first && in_second && strcmp(a, b) != 0)
                fprintf(stderr, "\n%s: node %s: out\n%s  became\n%s", path, names[i], a, b);
            CU_ASSERT(!in_first || !in_second || strcmp(a, b) == 0);
        }
        if (strcmp(first, second) != 0)
            fprintf(stderr, "\n%s: the dump changed on a round trip:\n--- first\n%s--- second\n%s", path, first,
                    second);
        CU_ASSERT_STRING_EQUAL(first, second);
    }
    free(first);
    free(second);
    tgc_graph_free(g);
    tgc_graph_free(g2);
    tgc_diags_free(d);
}

static bool ends_with(const char *s, const char *suffix) {
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* Appends the *.yaml files under dir (recursively when deep) to files. */
static void find_yaml(const char *dir, bool deep, char **files, int *count) {
    DIR *dp = opendir(dir);
    if (dp == NULL) return;
    struct dirent *ent;
    while ((ent = readdir(dp)) != NULL && *count < MAX_FILES) {
        if (ent->d_name[0] == '.') continue;
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, ent->d_name);
        struct stat st;
        if (stat(path, &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) {
            if (deep) find_yaml(path, deep, files, count);
        } else if (ends_with(ent->d_name, ".yaml")) {
            files[(*count)++] = strdup(path);
        }
    }
    closedir(dp);
}

static int compare_paths(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Round-trips every *.yaml under `rel`; returns how many. */
static int round_trip_all(const char *rel, bool deep) {
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", tgc_test_path(rel));
    char *files[MAX_FILES];
    int count = 0;
    find_yaml(dir, deep, files, &count);
    qsort(files, (size_t)count, sizeof files[0], compare_paths);
    for (int i = 0; i < count; i++) {
        check_round_trip(files[i]);
        free(files[i]);
    }
    return count;
}

static void test_good_graphs_round_trip(void) {
    int n = round_trip_all("tests/data/good", false);
    printf("\n  %d good graphs round-tripped\n", n);
    CU_ASSERT(n >= 6);
}

static void test_examples_round_trip(void) {
    int n = round_trip_all("examples", true);
    printf("\n  %d examples round-tripped\n", n);
    CU_ASSERT(n >= 2);
}

/* Shapes of the digits CNN by hand: x is [N, 1, 8, 8]; 3x3 convs with pads
 * 1 and stride 1 keep 8x8 and 4x4; 2x2 pools with stride 2 halve them;
 * flat_shape is [N, -1] from Shape/Gather/Unsqueeze/Concat, so flat is
 * [N, 16 * 2 * 2] = [N, 64]; fc1.w is [32, 64] with transB, fc2.w [10, 32]. */
static void test_cnn_shapes_in_dump(void) {
    static const struct {
        const char *node, *out;
    } want[] = {
        {"conv1", "{dtype: float32, shape: [N, 8, 8, 8]}\n"},
        {"pool1", "{dtype: float32, shape: [N, 8, 4, 4]}\n"},
        {"conv2", "{dtype: float32, shape: [N, 16, 4, 4]}\n"},
        {"pool2", "{dtype: float32, shape: [N, 16, 2, 2]}\n"},
        {"feat_shape", "{dtype: int64, shape: [4]}\n"},
        {"batch", "{dtype: int64, shape: []}\n"},
        {"batch1", "{dtype: int64, shape: [1]}\n"},
        {"flat_shape", "{dtype: int64, shape: [2]}\n"},
        {"flat", "{dtype: float32, shape: [N, 64]}\n"},
        {"fc1", "{dtype: float32, shape: [N, 32]}\n"},
        {"logits", "{dtype: float32, shape: [N, 10]}\n"},
        {"probs", "{dtype: float32, shape: [N, 10]}\n"},
    };
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    tgc_status s = tgc_graph_load(tgc_test_path("examples/digits/cnn.yaml"), d, &g);
    if (s != TGC_OK) tgc_diags_print(d, stderr);
    CU_ASSERT_EQUAL_FATAL(s, TGC_OK);
    char *dump = dump_to_string(g);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dump);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        char got[512];
        bool found = node_out(dump, want[i].node, got, sizeof got);
        if (!found || strcmp(got, want[i].out) != 0)
            fprintf(stderr, "\nnode %s: want out %s got %s", want[i].node, want[i].out, found ? got : "(none)\n");
        CU_ASSERT(found && strcmp(got, want[i].out) == 0);
    }
    free(dump);
    tgc_graph_free(g);
    tgc_diags_free(d);
}

/* Byte-equal dumps could still both have lost something: each good graph's
 * dump must keep what the file wrote, in the dumper's spelling. */
static void test_dump_keeps_what_was_written(void) {
    static const struct {
        const char *file, *text;
    } want[] = {
        {"devices.yaml", "\n  device: gpu1\n  colocate_with: [b]\n"},
        {"devices.yaml", "\n  device: gpu\n"},
        {"devices.yaml", "\n  inputs: [c, e]\n  colocate_with: [a, d]\n"},
        {"split_control.yaml", "\noutputs: [joined, 'parts:2', 'uneven:1']\n"},
        {"split_control.yaml", "\n  inputs: [parts, warm, ^side]\n"},
        {"split_control.yaml", "\n  - {dtype: float32, shape: [N, 2]}\n  - {dtype: float32, shape: [N, 4]}\n"},
        {"optional_inputs.yaml", "\n  inputs: [x, '', hi]\n"},
        {"optional_inputs.yaml", "\n  attrs: {transB: 1, alpha: 0.5, beta: 2}\n"},
        {"tensor_attrs.yaml", "attrs: {value: {dtype: int64, shape: [1], values: [7]}}"},
        {"tensor_attrs.yaml", "attrs: {value: {dtype: float16, shape: [2, 2], values: [1, 0.5, -0.25, 2]}}"},
        {"tensor_attrs.yaml", "\n  - {dtype: float32, shape: [N, C]}\n"},
        {"npy_cnn.yaml", "{name: conv.w, dtype: float32, shape: [4, 1, 3, 3], file: npy/conv_w.npy}"},
        {"npy_cnn.yaml", "\n  - {dtype: float32, shape: [N, 16]}\n"},
        {"every_dtype.yaml", "values: [-9223372036854775808, 0, 9223372036854775807]"},
        {"every_dtype.yaml", "values: [-2147483648, 0, 2147483647]"},
        {"every_dtype.yaml", "{name: f16_k, dtype: float16, shape: [3], values: [0.5, -2, 65504]}"},
        {"every_dtype.yaml", "values: [0, 128, 255]"},
        {"every_dtype.yaml", "values: [true, false, true]"},
        {"every_dtype.yaml", "values: [.inf, -.inf, 1]"},
        {"every_dtype.yaml", "shape: [], values: [.nan]"},
        {"symbolic.yaml", "\n  - {dtype: float32, shape: [B, T, 2, 2]}\n"},
        {"symbolic.yaml", "\n  - {dtype: float32, shape: [T, B, 4]}\n"},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", tgc_test_path("tests/data/good"), want[i].file);
        tgc_diags *d = tgc_diags_create();
        tgc_graph *g = NULL;
        tgc_status s = tgc_graph_load(path, d, &g);
        if (s != TGC_OK) tgc_diags_print(d, stderr);
        CU_ASSERT_EQUAL(s, TGC_OK);
        char *dump = g ? dump_to_string(g) : NULL;
        bool found = dump != NULL && strstr(dump, want[i].text) != NULL;
        if (!found) fprintf(stderr, "\n%s: the dump lacks \"%s\":\n%s", want[i].file, want[i].text, dump ? dump : "");
        CU_ASSERT(found);
        free(dump);
        tgc_graph_free(g);
        tgc_diags_free(d);
    }
}

/* A file that cannot be read is an "io" error with no position. */
static void test_missing_file_is_io(void) {
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    CU_ASSERT_EQUAL(tgc_graph_load(tgc_test_path("tests/data/good/no_such_graph.yaml"), d, &g), TGC_ERR_IO);
    CU_ASSERT_PTR_NULL(g);
    CU_ASSERT_EQUAL_FATAL(tgc_diags_error_count(d), 1);
    CU_ASSERT_STRING_EQUAL(tgc_diag_rule(d, 0), "io");
    CU_ASSERT_EQUAL(tgc_diag_line(d, 0), 0);
    tgc_diags_free(d);
}

TGC_TEST_MAIN("round trip", {"good graphs round-trip", test_good_graphs_round_trip},
              {"examples round-trip", test_examples_round_trip},
              {"dump keeps what was written", test_dump_keeps_what_was_written},
              {"cnn shapes in the dump", test_cnn_shapes_in_dump},
              {"missing file is an io error", test_missing_file_is_io})
