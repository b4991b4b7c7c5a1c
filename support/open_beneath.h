/* Files a model names, opened only beneath the folder they belong to.
 *
 * A model file is untrusted input, and so are the paths it holds (`file:`
 * weights in a tgc/1 graph, ONNX external data). Such a path is resolved
 * beneath a base folder (the graph's folder, or a weights folder the user
 * names) and may not leave it: not by being absolute, not by `..`, not
 * through a symbolic link, whatever the link's place in the path. Links that
 * stay beneath the base are followed, as Linux's RESOLVE_BENEATH does (a
 * folder of weights shared by symlinks works); magic links (/proc/PID/fd/N)
 * never are. Only regular files open: a folder, a FIFO or a device is
 * refused without blocking on it. The caller learns the file's size, to
 * check it against what the tensor needs before reading a byte.
 *
 * The kernel does the resolution where it can (openat2 with RESOLVE_BENEATH |
 * RESOLVE_NO_MAGICLINKS, Linux 5.6); where it answers ENOSYS, the same rules
 * are kept by a walk one component at a time: each opened with openat and
 * O_NOFOLLOW, `..` popping a stack of folder descriptors that never goes
 * below the base, a link read with readlinkat and its (relative) target
 * spliced into what remains. The walk is also called alone by the tests.
 *
 * Writing: tgc_write_beneath puts bytes at a path beneath a folder, the way
 * outputs must be written: missing folders made, no folder of the path a
 * link (the walk follows none when writing), a temporary file created with
 * O_EXCL | O_NOFOLLOW beside the target and renamed over it, so a
 * pre-placed symlink named like the target is replaced, never written
 * through, and a failure leaves no half-written file.
 *
 * Example usage:
 *     int fd;
 *     uint64_t size;
 *     char why[256];
 *     if (tgc_open_beneath(g->dir, "weights/w.npy", "the model's folder", &fd, &size, why, sizeof why) != TGC_OK)
 *         report("'weights/w.npy' %s", why);  // "is a symlink leaving the model's folder (to '/etc/passwd')"
 *     else { ...check size, read(fd)...; close(fd); }
 */
#ifndef TGC_SUPPORT_OPEN_BENEATH_H
#define TGC_SUPPORT_OPEN_BENEATH_H

#include "tgc.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Opens `path` for reading beneath the folder `base_dir` (itself opened as
 * given: a link in base_dir is the caller's choice). `base_what` names the
 * base in messages ("the model's folder"). On success stores a descriptor
 * (O_RDONLY, close-on-exec, blocking) owned by the caller in *fd, the
 * file's size in bytes in *size, and returns TGC_OK. On failure stores -1,
 * writes into err[0..err_size) a reason that reads after the path ("is an
 * absolute path; files resolve beneath the model's folder", "leaves the
 * model's folder through '..'", "is a symlink leaving the model's folder (to
 * '/etc/passwd')", "is not a regular file (a directory)", "cannot be opened:
 * No such file or directory") and returns TGC_ERR_INVALID for a path the
 * rules refuse, TGC_ERR_IO when the file system says no (missing file,
 * permissions, base_dir unreadable). */
tgc_status tgc_open_beneath(const char *base_dir, const char *path, const char *base_what, int *fd,
                            uint64_t *size, char *err, size_t err_size);

/* tgc_open_beneath without openat2: the component-by-component walk the
 * kernels before 5.6 get. Same contract and the same answers. */
tgc_status tgc_open_beneath_walk(const char *base_dir, const char *path, const char *base_what, int *fd,
                                 uint64_t *size, char *err, size_t err_size);

/* Writes `size` bytes at `path` beneath the folder `base_dir` atomically (see
 * above): missing folders of the path are created (mode 0777 before the
 * umask); `path` must be relative, without `..`, and no folder on it may
 * be a link. Returns TGC_OK; TGC_ERR_INVALID for a path the rules refuse;
 * TGC_ERR_IO when a folder or the file cannot be made or written; with a
 * reason in err as tgc_open_beneath's. */
tgc_status tgc_write_beneath(const char *base_dir, const char *path, const void *bytes, size_t size, char *err,
                             size_t err_size);

/* True when `path` is relative and no `..` in it climbs above where it
 * starts ("a/../b" stays, "a/../../b" does not): a lexical check only,
 * links are not looked at. */
bool tgc_path_stays_beneath(const char *path);

#endif
