/* Private to devices/cpu/jit/llvm_*.c: the pieces of the LLVM-C JIT. */
#ifndef TGC_DEVICES_CPU_JIT_LLVM_JIT_H
#define TGC_DEVICES_CPU_JIT_LLVM_JIT_H

#include "devices/cpu/jit/jit.h"

#include "devices/cpu/jit/llvm_api.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The functions of devices/cpu/jit/bitcode/jit_funcs.c as LLVM bitcode,
 * one per vector ISA (generated/jit_bitcode.c); the table ends with
 * lanes 0. */
typedef struct tgc_jit_bitcode {
    int lanes;
    const unsigned char *data;
    size_t size;
} tgc_jit_bitcode;

extern const tgc_jit_bitcode tgc_jit_bitcodes[];

/* Adds function `name` computing program p over vectors of `lanes` floats
 * (the tgc_jit_fused_fn contract) to module m of context ctx, which holds
 * the bitcode's functions tgc_jit_fn_<NAME> for those lanes. False, with
 * the reason in err, for a row whose expression does not parse or a
 * program that does not fit its rows. Not thread-safe (the caller holds
 * the JIT's lock). */
bool tgc_jit_emit_fused(LLVMContextRef ctx, LLVMModuleRef m, const char *name, const tgc_jit_program *p, int lanes,
                        char *err, size_t err_size);

/* The disk cache (devices/cpu/jit/llvm_disk_cache.c). Files are
 * DIR/<hex>.o where DIR is $XDG_CACHE_HOME/tgc/jit (else $HOME/.cache/tgc/jit)
 * and <hex> the key's 128-bit hash; each holds a header, the key and the
 * object code, with a checksum over both. */

/* The object code cached for `key` under file name `hex`: a malloc'd copy
 * in *obj (*obj_len bytes), true; false when there is no cache directory or
 * file (*rejected false) or when the file is not a sound record of this key
 * (*rejected true: the caller rebuilds, and the store replaces it). */
bool tgc_jit_disk_load(const char *hex, const char *key, char **obj, size_t *obj_len, bool *rejected);

/* Writes the record for key (a temporary file renamed into place, so a
 * reader never sees half of one). Failing is silent: the cache is an
 * optimization. */
void tgc_jit_disk_store(const char *hex, const char *key, const char *obj, size_t obj_len);

/* FNV-1a over n bytes from seed h (the cache's hashes and checksums). */
uint64_t tgc_jit_fnv1a(uint64_t h, const void *data, size_t n);

#endif
