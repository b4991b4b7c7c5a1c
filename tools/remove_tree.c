/* tgc_tool_remove_tree: nftw, depth first, removing each entry. */
#include "tools/remove_tree.h"

#include <ftw.h>
#include <stdio.h>
#include <sys/stat.h>

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

void tgc_tool_remove_tree(const char *dir) { nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS); }
