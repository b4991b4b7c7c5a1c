/* The cache folder (cache_dir.h). */
#include "support/cache_dir.h"

#include "support/settings.h"

#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>

/* mkdir that takes an existing folder as success. */
static bool made(const char *dir) { return mkdir(dir, 0700) == 0 || errno == EEXIST; }

bool tgc_cache_dir(const char *sub, char *out, size_t size) {
    const tgc_settings *set = tgc_settings_current();
    const char *xdg = set->xdg_cache_home, *home = set->home;
    int n;
    if (xdg != NULL && xdg[0] == '/') n = snprintf(out, size, "%s", xdg);
    else if (home != NULL && home[0] == '/') n = snprintf(out, size, "%s/.cache", home);
    else return false;
    if (n < 0 || (size_t)n >= size || !made(out)) return false;
    n = snprintf(out + n, size - (size_t)n, "/tgc");
    if (n < 0 || !made(out)) return false;
    if (sub == NULL || sub[0] == '\0') return true;
    size_t at = 0;
    while (out[at] != '\0') at++;
    n = snprintf(out + at, size - at, "/%s", sub);
    return n >= 0 && (size_t)n < size - at && made(out);
}
