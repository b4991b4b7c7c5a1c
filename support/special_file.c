/* Output paths that name a device (see special_file.h). */
#include "support/special_file.h"

#include <sys/stat.h>

bool tgc_path_is_device(const char *path) {
    struct stat sb;
    return lstat(path, &sb) == 0 && (S_ISCHR(sb.st_mode) || S_ISFIFO(sb.st_mode));
}
