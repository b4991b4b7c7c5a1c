/* Output paths that name a device: written in place, never replaced.
 * Private to the library and the tools.
 *
 * tgc writes its output files atomically: a temporary file beside the
 * path, renamed over it. Renamed over /dev/null (`tgc compile -o
 * /dev/null`, `--trace /dev/null`), that replaced the machine's /dev/null
 * with a plain file for every process when run as root. A path that is
 * itself (not through a link) a character device or a FIFO is therefore
 * opened and written where it is, as `>` in a shell would.
 *
 * Example usage:
 *     if (tgc_path_is_device(path)) f = fopen(path, "wb");  // no temporary, no rename
 */
#ifndef TGC_SUPPORT_SPECIAL_FILE_H
#define TGC_SUPPORT_SPECIAL_FILE_H

#include <stdbool.h>

/* True when `path` exists and is, without following a link, a character
 * device (/dev/null, a terminal) or a FIFO. False otherwise, and when it
 * cannot be examined (missing: a new file is made as usual). */
bool tgc_path_is_device(const char *path);

#endif
