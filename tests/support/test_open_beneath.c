/* Files a model names stay beneath their folder (support/open_beneath.h):
 * every case through openat2 and through the walk older kernels get, which
 * must give the same answers; and outputs written beneath a folder never
 * through a link. */
#include "tests/harness.h"

#include "support/open_beneath.h"
#include "tools/remove_tree.h"

#include <CUnit/CUnit.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[64], base[96];

static void put(const char *rel, const char *text) {
    char p[256];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    FILE *f = fopen(p, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(text, f);
    fclose(f);
}

static void link_at(const char *target, const char *rel) {
    char p[256];
    snprintf(p, sizeof p, "%s/%s", base, rel);
    CU_ASSERT_EQUAL_FATAL(symlink(target, p), 0);
}

/* root/outside.bin, root/base/ with files, folders, links, a FIFO. */
static void make_tree(void) {
    snprintf(root, sizeof root, "/tmp/tgc-beneath-XXXXXX");
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(root));
    snprintf(base, sizeof base, "%s/base", root);
    char p[256];
    CU_ASSERT_EQUAL_FATAL(mkdir(base, 0777), 0);
    snprintf(p, sizeof p, "%s/sub", base);
    CU_ASSERT_EQUAL_FATAL(mkdir(p, 0777), 0);
    put("outside.bin", "secret");
    put("base/w.bin", "0123456789");
    put("base/sub/x.bin", "abc");
    link_at("w.bin", "in_link");
    link_at("../w.bin", "sub/up_link");
    link_at("/etc/passwd", "out_link");
    link_at("../outside.bin", "rel_out");
    link_at("sub/../../outside.bin", "rel_out2");
    link_at("..", "dir_out");
    link_at("/etc", "dir_out_abs");
    link_at("sub", "dir_in");
    link_at("loop2", "loop1");
    link_at("loop1", "loop2");
    link_at("/proc/self/fd/0", "magic");
    snprintf(p, sizeof p, "%s/fifo", base);
    CU_ASSERT_EQUAL_FATAL(mkfifo(p, 0666), 0);
}

typedef tgc_status (*opener)(const char *, const char *, const char *, int *, uint64_t *, char *, size_t);

static const opener openers[2] = {tgc_open_beneath, tgc_open_beneath_walk};

/* Opens rel under both openers; expects TGC_OK with `size` and contents
 * starting with `head`. */
static void expect_ok(const char *rel, uint64_t size, const char *head) {
    for (int k = 0; k < 2; k++) {
        int fd = -2;
        uint64_t got = 0;
        char err[256] = "";
        tgc_status st = openers[k](base, rel, "the model's folder", &fd, &got, err, sizeof err);
        if (st != TGC_OK) fprintf(stderr, "%s (%s): %s\n", rel, k ? "walk" : "openat2", err);
        CU_ASSERT_EQUAL(st, TGC_OK);
        if (st != TGC_OK) continue;
        CU_ASSERT_EQUAL(got, size);
        char buf[16] = "";
        CU_ASSERT_EQUAL(read(fd, buf, strlen(head)), (ssize_t)strlen(head));
        CU_ASSERT_EQUAL(memcmp(buf, head, strlen(head)), 0);
        close(fd);
    }
}

/* Expects status `want` and an err containing `phrase`, from both openers. */
static void expect_refused(const char *rel, tgc_status want, const char *phrase) {
    for (int k = 0; k < 2; k++) {
        int fd = -2;
        uint64_t got = 7;
        char err[256] = "";
        tgc_status st = openers[k](base, rel, "the model's folder", &fd, &got, err, sizeof err);
        if (st != want || strstr(err, phrase) == NULL)
            fprintf(stderr, "%s (%s): status %d, '%s'; wanted %d, '%s'\n", rel, k ? "walk" : "openat2", st, err, want,
                    phrase);
        CU_ASSERT_EQUAL(st, want);
        CU_ASSERT_PTR_NOT_NULL(strstr(err, phrase));
        CU_ASSERT_EQUAL(fd, -1);
        if (fd >= 0) close(fd);
    }
}

static void test_relative_paths_open_with_their_size(void) {
    make_tree();
    expect_ok("w.bin", 10, "0123");
    expect_ok("sub/x.bin", 3, "abc");
    expect_ok("./sub//x.bin", 3, "abc");
    expect_ok("sub/../w.bin", 10, "0123"); /* '..' that stays inside */
    tgc_tool_remove_tree(root);
}

static void test_absolute_and_climbing_paths_are_refused(void) {
    make_tree();
    expect_refused("/etc/passwd", TGC_ERR_INVALID, "is an absolute path");
    expect_refused("../outside.bin", TGC_ERR_INVALID, "leaves the model's folder through '..'");
    expect_refused("sub/../../outside.bin", TGC_ERR_INVALID, "through '..'");
    expect_refused("", TGC_ERR_INVALID, "empty");
    tgc_tool_remove_tree(root);
}

/* Links are followed while they stay beneath the folder (RESOLVE_BENEATH's
 * rule), refused as soon as they lead out, wherever they are in the path. */
static void test_links_inside_are_followed(void) {
    make_tree();
    expect_ok("in_link", 10, "0123");
    expect_ok("sub/up_link", 10, "0123");
    expect_ok("dir_in/x.bin", 3, "abc");
    tgc_tool_remove_tree(root);
}

static void test_links_out_are_refused(void) {
    make_tree();
    expect_refused("out_link", TGC_ERR_INVALID, "is a symlink leaving the model's folder ('out_link' -> '/etc/passwd')");
    expect_refused("rel_out", TGC_ERR_INVALID, "is a symlink leaving the model's folder");
    expect_refused("rel_out2", TGC_ERR_INVALID, "is a symlink leaving the model's folder");
    expect_refused("magic", TGC_ERR_INVALID, "symlink leaving");
    /* A symlinked directory pointing outside, relative or absolute. */
    expect_refused("dir_out/outside.bin", TGC_ERR_INVALID, "passes through a symlink leaving the model's folder");
    expect_refused("dir_out_abs/passwd", TGC_ERR_INVALID, "passes through a symlink leaving");
    expect_refused("loop1", TGC_ERR_INVALID, "levels of symbolic links");
    tgc_tool_remove_tree(root);
}

static void test_only_regular_files(void) {
    make_tree();
    expect_refused("fifo", TGC_ERR_INVALID, "is not a regular file (a FIFO)"); /* and does not block */
    expect_refused("sub", TGC_ERR_INVALID, "is not a regular file (a directory)");
    expect_refused("sub/..", TGC_ERR_INVALID, "is not a regular file (a directory)");
    expect_refused("missing.bin", TGC_ERR_IO, "cannot be opened: No such file or directory");
    expect_refused("w.bin/x", TGC_ERR_IO, "cannot be opened");
    tgc_tool_remove_tree(root);
}

static void read_back(const char *path, char *buf, size_t cap) {
    memset(buf, 0, cap);
    FILE *f = fopen(path, "rb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT(fread(buf, 1, cap - 1, f) < cap);
    fclose(f);
}

static void test_write_makes_folders_and_replaces_links(void) {
    make_tree();
    char err[256] = "", p[256], buf[64];
    CU_ASSERT_EQUAL(tgc_write_beneath(base, "a/b/c.bin", "hello", 5, err, sizeof err), TGC_OK);
    snprintf(p, sizeof p, "%s/a/b/c.bin", base);
    read_back(p, buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "hello");
    /* A pre-placed link named like the output is replaced, not written through. */
    CU_ASSERT_EQUAL(tgc_write_beneath(base, "rel_out", "new", 3, err, sizeof err), TGC_OK);
    snprintf(p, sizeof p, "%s/outside.bin", root);
    read_back(p, buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "secret");
    struct stat sb;
    snprintf(p, sizeof p, "%s/rel_out", base);
    CU_ASSERT_EQUAL(lstat(p, &sb), 0);
    CU_ASSERT(S_ISREG(sb.st_mode));
    read_back(p, buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "new");
    /* A linked folder on the way is refused, and nothing lands outside. */
    CU_ASSERT_EQUAL(tgc_write_beneath(base, "dir_out/planted.bin", "x", 1, err, sizeof err), TGC_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "symlink 'dir_out'"));
    snprintf(p, sizeof p, "%s/planted.bin", root);
    CU_ASSERT_NOT_EQUAL(access(p, F_OK), 0);
    CU_ASSERT_EQUAL(tgc_write_beneath(base, "../x.bin", "x", 1, err, sizeof err), TGC_ERR_INVALID);
    CU_ASSERT_EQUAL(tgc_write_beneath(base, "/tmp/x.bin", "x", 1, err, sizeof err), TGC_ERR_INVALID);
    CU_ASSERT_EQUAL(tgc_write_beneath(base, "sub/", "x", 1, err, sizeof err), TGC_ERR_INVALID);
    tgc_tool_remove_tree(root);
}

static void test_lexical_rule(void) {
    CU_ASSERT(tgc_path_stays_beneath("a/b"));
    CU_ASSERT(tgc_path_stays_beneath("a/../b"));
    CU_ASSERT(tgc_path_stays_beneath("./a/./b/.."));
    CU_ASSERT_FALSE(tgc_path_stays_beneath("a/../../b"));
    CU_ASSERT_FALSE(tgc_path_stays_beneath(".."));
    CU_ASSERT_FALSE(tgc_path_stays_beneath("/a"));
}

TGC_TEST_MAIN("open_beneath", {"relative paths open, with their size", test_relative_paths_open_with_their_size},
              {"absolute and climbing paths are refused", test_absolute_and_climbing_paths_are_refused},
              {"links that stay inside are followed", test_links_inside_are_followed},
              {"links out are refused, files and folders", test_links_out_are_refused},
              {"only regular files", test_only_regular_files},
              {"writes make folders and replace links", test_write_makes_folders_and_replaces_links},
              {"the lexical rule", test_lexical_rule})
