/* The folder tgc keeps its caches in (OpenCL program binaries, the JIT's
 * objects, measured costs). Private to the library. */
#ifndef TGC_SUPPORT_CACHE_DIR_H
#define TGC_SUPPORT_CACHE_DIR_H

#include <stdbool.h>
#include <stddef.h>

/* $XDG_CACHE_HOME/tgc (when XDG_CACHE_HOME, as the settings snapshot
 * read it, is an absolute path), else $HOME/.cache/tgc, with `sub`
 * ("jit"; NULL or "": none) beneath, into out[0..size), every folder made
 * where missing (0700: caches are the user's own). False when there is
 * no home for it, the path does not fit, or a folder cannot be made. */
bool tgc_cache_dir(const char *sub, char *out, size_t size);

#endif
