/* Files a model names, opened only beneath their folder (see open_beneath.h).
 *
 * One rule, two ways of keeping it: openat2's RESOLVE_BENEATH where the
 * kernel has it, and a walk over the path's components (open_walk) where it
 * does not. The walk holds a stack of folder descriptors, from the base
 * (depth 0) down to where the walk is; `..` pops one and may not pop the
 * base; every component is opened with O_NOFOLLOW, so no link is ever
 * followed by the kernel: a link met is read (readlinkat) and, when its
 * target is relative, spliced in front of what remains of the path, as
 * path resolution does, under the same depth rule. A path that the
 * lexical check (`..` counted against the depth) lets through but that
 * still climbs out can only have climbed through a link, which is what the
 * messages then say. */
#define _GNU_SOURCE /* O_PATH, syscall() */
#include "support/open_beneath.h"

#include "support/alloc.h"
#include "support/diag.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__has_include)
#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#define TGC_HAVE_OPENAT2 1
#endif
#endif

/* Folders deeper than this beneath the base are refused (the stack of
 * descriptors is fixed); links followed in one resolution, as Linux's 40. */
#define MAX_DEPTH 64
#define MAX_LINKS 40

static const char *kind_word(mode_t m) {
    if (S_ISDIR(m)) return "a directory";
    if (S_ISFIFO(m)) return "a FIFO";
    if (S_ISCHR(m) || S_ISBLK(m)) return "a device";
    if (S_ISSOCK(m)) return "a socket";
    if (S_ISLNK(m)) return "a symlink";
    return "not a plain file";
}

bool tgc_path_stays_beneath(const char *path) {
    if (path == NULL || path[0] == '/') return false;
    long depth = 0;
    for (const char *p = path; *p;) {
        const char *end = strchr(p, '/');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == 2 && p[0] == '.' && p[1] == '.') {
            if (--depth < 0) return false;
        } else if (len > 0 && !(len == 1 && p[0] == '.')) {
            depth++;
        }
        p += len + (end != NULL);
    }
    return true;
}

/* The checks every path gets before any resolution. */
static tgc_status check_text(const char *path, const char *base_what, char *err, size_t err_size) {
    if (path == NULL || path[0] == '\0') return tgc_err_format(err, err_size, TGC_ERR_INVALID, "is an empty path");
    if (path[0] == '/')
        return tgc_err_format(err, err_size, TGC_ERR_INVALID, "is an absolute path; files resolve beneath %s", base_what);
    if (!tgc_path_stays_beneath(path))
        return tgc_err_format(err, err_size, TGC_ERR_INVALID, "leaves %s through '..'", base_what);
    return TGC_OK;
}

static int open_base(const char *base_dir) {
    return open(base_dir != NULL && base_dir[0] != '\0' ? base_dir : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
}

/* A regular file open for reading: checks *fd (just opened, maybe
 * non-blocking) is one, makes it blocking, stores its size. Closes it and
 * fails otherwise. */
static tgc_status finish_regular(int *fd, uint64_t *size, char *err, size_t err_size) {
    struct stat st;
    if (fstat(*fd, &st) != 0) {
        int e = errno;
        close(*fd);
        *fd = -1;
        return tgc_err_format(err, err_size, TGC_ERR_IO, "cannot be read: %s", strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(*fd);
        *fd = -1;
        return tgc_err_format(err, err_size, TGC_ERR_INVALID, "is not a regular file (%s)", kind_word(st.st_mode));
    }
    int fl = fcntl(*fd, F_GETFL);
    if (fl >= 0) fcntl(*fd, F_SETFL, fl & ~O_NONBLOCK);
    *size = (uint64_t)st.st_size;
    return TGC_OK;
}

/* ---- The walk ------------------------------------------------------------ */

typedef struct walk {
    int fds[MAX_DEPTH + 1]; /* fds[0] the base, fds[depth] where the walk is */
    int depth;
    int links;
    bool path_is_link; /* the first link met was the path's last component */
    char link_name[256], link_target[PATH_MAX]; /* the last link followed */
} walk;

static void walk_release(walk *w) {
    for (int i = 0; i <= w->depth; i++)
        if (w->fds[i] >= 0) close(w->fds[i]);
    w->depth = -1;
}

/* "is a symlink leaving ..." when the first link met was the path's last
 * component, else "passes through a symlink leaving ...". */
static tgc_status escaped(const walk *w, const char *base_what, char *err, size_t err_size) {
    bool whole = w->path_is_link;
    return tgc_err_format(err, err_size, TGC_ERR_INVALID, "%s a symlink leaving %s ('%s' -> '%s')",
                whole ? "is" : "passes through", base_what, w->link_name, w->link_target);
}

/* Reads the link `name` in folder `dirfd` into w and makes the new text to
 * resolve: its target, then '/' and `rest` when something follows. Returns
 * NULL (err written) when the link may not be followed. */
static char *splice_link(walk *w, int dirfd, const char *name, const char *rest, const char *base_what,
                         tgc_status *st, char *err, size_t err_size) {
    if (++w->links > MAX_LINKS) {
        *st = tgc_err_format(err, err_size, TGC_ERR_INVALID, "has more than %d levels of symbolic links", MAX_LINKS);
        return NULL;
    }
    ssize_t n = readlinkat(dirfd, name, w->link_target, sizeof w->link_target - 1);
    if (n < 0) {
        *st = tgc_err_format(err, err_size, TGC_ERR_IO, "cannot be opened: %s", strerror(errno));
        return NULL;
    }
    w->link_target[n] = '\0';
    snprintf(w->link_name, sizeof w->link_name, "%s", name);
    if (w->link_target[0] == '/' || n == 0) {
        *st = escaped(w, base_what, err, err_size);
        return NULL;
    }
    size_t rest_len = rest ? strlen(rest) : 0;
    char *text = tgc_malloc((size_t)n + rest_len + 2);
    if (text == NULL) {
        *st = tgc_err_format(err, err_size, TGC_ERR_NOMEM, "out of memory");
        return NULL;
    }
    memcpy(text, w->link_target, (size_t)n);
    text[n] = '\0';
    if (rest_len > 0) {
        text[n] = '/';
        memcpy(text + n + 1, rest, rest_len + 1);
    }
    return text;
}

/* The walk proper, from base descriptor `base` (consumed). */
static tgc_status open_walk(int base, const char *path, const char *base_what, int *fd, uint64_t *size, char *err,
                            size_t err_size) {
    walk w = {.depth = 0};
    w.fds[0] = base;
    char *text = tgc_strdup(path);
    if (text == NULL) {
        walk_release(&w);
        return tgc_err_format(err, err_size, TGC_ERR_NOMEM, "out of memory");
    }
    tgc_status st = TGC_OK;
    char *p = text;
    for (;;) {
        while (*p == '/') p++;
        if (*p == '\0') { /* the path ends on a folder: "", ".", "a/.." */
            st = tgc_err_format(err, err_size, TGC_ERR_INVALID, "is not a regular file (a directory)");
            break;
        }
        char *name = p;
        while (*p && *p != '/') p++;
        if (*p == '/') *p++ = '\0';
        while (*p == '/') p++;
        bool last = *p == '\0';
        if (strcmp(name, ".") == 0) continue;
        if (strcmp(name, "..") == 0) {
            if (w.depth == 0) { /* the text check passed: a link brought us here */
                st = w.links > 0 ? escaped(&w, base_what, err, err_size)
                                 : tgc_err_format(err, err_size, TGC_ERR_INVALID, "leaves %s through '..'", base_what);
                break;
            }
            close(w.fds[w.depth--]);
            continue;
        }
        int cur = w.fds[w.depth];
        struct stat sb;
        int next = -1;
        if (fstatat(cur, name, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(sb.st_mode)) {
            errno = ELOOP;
        } else if (last && fstatat(cur, name, &sb, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(sb.st_mode)) {
            st = tgc_err_format(err, err_size, TGC_ERR_INVALID, "is not a regular file (%s)", kind_word(sb.st_mode));
            break;
        } else {
            next = openat(cur, name,
                          last ? O_RDONLY | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC
                               : O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        }
        if (next < 0) {
            int e = errno;
            if (fstatat(cur, name, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(sb.st_mode)) {
                if (w.links == 0) w.path_is_link = last;
                char *spliced = splice_link(&w, cur, name, last ? NULL : p, base_what, &st, err, err_size);
                if (spliced == NULL) break;
                tgc_free(text);
                text = p = spliced;
                continue;
            }
            st = tgc_err_format(err, err_size, TGC_ERR_IO, "cannot be opened: %s", strerror(e));
            break;
        }
        if (last) {
            *fd = next;
            st = finish_regular(fd, size, err, err_size);
            break;
        }
        if (w.depth == MAX_DEPTH) {
            close(next);
            st = tgc_err_format(err, err_size, TGC_ERR_INVALID, "is nested more than %d folders deep", MAX_DEPTH);
            break;
        }
        w.fds[++w.depth] = next;
    }
    tgc_free(text);
    walk_release(&w);
    if (st != TGC_OK) *fd = -1;
    return st;
}

/* ---- Public ---------------------------------------------------------------- */

/* Both entry points: checks, opens the base, then openat2 when `kernel`,
 * else (or when the kernel lacks it) the walk. */
static tgc_status open_beneath(bool kernel, const char *base_dir, const char *path, const char *base_what, int *fd,
                               uint64_t *size, char *err, size_t err_size) {
    *fd = -1;
    *size = 0;
    if (base_what == NULL) base_what = "the model's folder";
    tgc_status st = check_text(path, base_what, err, err_size);
    if (st != TGC_OK) return st;
    int base = open_base(base_dir);
    if (base < 0)
        return tgc_err_format(err, err_size, TGC_ERR_IO, "cannot be opened: folder '%s': %s",
                    base_dir != NULL && base_dir[0] ? base_dir : ".", strerror(errno));
#if defined(TGC_HAVE_OPENAT2) && defined(SYS_openat2)
    if (kernel) {
        struct open_how how;
        memset(&how, 0, sizeof how);
        how.flags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
        how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
        int f = (int)syscall(SYS_openat2, base, path, &how, sizeof how);
        if (f >= 0) {
            close(base);
            *fd = f;
            return finish_regular(fd, size, err, err_size);
        }
        int e = errno;
        /* EXDEV (out of the base), ELOOP (a magic link, too many links): the
         * walk finds which link and says so. ENOSYS, EINVAL, E2BIG: a
         * kernel without openat2 or these flags. */
        if (e != EXDEV && e != ELOOP && e != ENOSYS && e != EINVAL && e != E2BIG) {
            close(base);
            return tgc_err_format(err, err_size, TGC_ERR_IO, "cannot be opened: %s", strerror(e));
        }
        st = open_walk(base, path, base_what, fd, size, err, err_size);
        if (st == TGC_OK && e != ENOSYS && e != EINVAL && e != E2BIG) { /* the kernel said no: so do we */
            close(*fd);
            *fd = -1;
            st = tgc_err_format(err, err_size, TGC_ERR_INVALID, "leaves %s (%s)", base_what, strerror(e));
        }
        return st;
    }
#else
    (void)kernel;
#endif
    return open_walk(base, path, base_what, fd, size, err, err_size);
}

tgc_status tgc_open_beneath(const char *base_dir, const char *path, const char *base_what, int *fd,
                            uint64_t *size, char *err, size_t err_size) {
    return open_beneath(true, base_dir, path, base_what, fd, size, err, err_size);
}

tgc_status tgc_open_beneath_walk(const char *base_dir, const char *path, const char *base_what, int *fd,
                                 uint64_t *size, char *err, size_t err_size) {
    return open_beneath(false, base_dir, path, base_what, fd, size, err, err_size);
}

/* ---- Writing ---------------------------------------------------------------- */

static bool write_all(int fd, const void *bytes, size_t size) {
    const unsigned char *p = bytes;
    while (size > 0) {
        ssize_t n = write(fd, p, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        p += n;
        size -= (size_t)n;
    }
    return true;
}

tgc_status tgc_write_beneath(const char *base_dir, const char *path, const void *bytes, size_t size, char *err,
                             size_t err_size) {
    static atomic_uint counter;
    const char *what = "the output folder";
    tgc_status st = check_text(path, what, err, err_size);
    if (st != TGC_OK) return st;
    for (const char *p = path; *p;) { /* no '..' at all when writing */
        size_t len = strcspn(p, "/");
        if (len == 2 && p[0] == '.' && p[1] == '.') return tgc_err_format(err, err_size, TGC_ERR_INVALID, "contains '..'");
        p += len + (p[len] == '/');
    }
    int dir = open_base(base_dir);
    if (dir < 0)
        return tgc_err_format(err, err_size, TGC_ERR_IO, "cannot be written: folder '%s': %s",
                    base_dir != NULL && base_dir[0] ? base_dir : ".", strerror(errno));
    char *text = tgc_strdup(path);
    if (text == NULL) {
        close(dir);
        return tgc_err_format(err, err_size, TGC_ERR_NOMEM, "out of memory");
    }
    /* The folders: made when missing, opened without following links. */
    char *name = text;
    for (char *slash; st == TGC_OK && (slash = strchr(name, '/')) != NULL; name = slash + 1) {
        *slash = '\0';
        if (name[0] == '\0' || strcmp(name, ".") == 0) continue;
        if (mkdirat(dir, name, 0777) != 0 && errno != EEXIST) {
            st = tgc_err_format(err, err_size, TGC_ERR_IO, "cannot be written: folder '%s': %s", name, strerror(errno));
            break;
        }
        int next = openat(dir, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (next < 0) {
            struct stat sb;
            if (fstatat(dir, name, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(sb.st_mode))
                st = tgc_err_format(err, err_size, TGC_ERR_INVALID, "passes through the symlink '%s'; outputs are not written through links", name);
            else
                st = tgc_err_format(err, err_size, TGC_ERR_IO, "cannot be written: folder '%s': %s", name, strerror(errno));
            break;
        }
        close(dir);
        dir = next;
    }
    if (st == TGC_OK && (name[0] == '\0' || strcmp(name, ".") == 0))
        st = tgc_err_format(err, err_size, TGC_ERR_INVALID, "names a folder, not a file");
    char tmp[NAME_MAX + 64];
    int fd = -1;
    for (int attempt = 0; st == TGC_OK && attempt < 100; attempt++) {
        snprintf(tmp, sizeof tmp, ".%.200s.tmp.%ld.%u", name, (long)getpid(), atomic_fetch_add(&counter, 1));
        fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST) break;
    }
    if (st == TGC_OK && fd < 0)
        st = tgc_err_format(err, err_size, TGC_ERR_IO, "cannot be written: %s", strerror(errno));
    if (st == TGC_OK) {
        bool ok = write_all(fd, bytes, size) && fsync(fd) == 0;
        int e = errno;
        if (close(fd) != 0 && ok) {
            ok = false;
            e = errno;
        }
        if (ok && renameat(dir, tmp, dir, name) != 0) {
            ok = false;
            e = errno;
        }
        if (!ok) {
            unlinkat(dir, tmp, 0);
            st = tgc_err_format(err, err_size, TGC_ERR_IO, "cannot be written: %s", strerror(e != 0 ? e : EIO));
        }
    }
    tgc_free(text);
    close(dir);
    return st;
}
