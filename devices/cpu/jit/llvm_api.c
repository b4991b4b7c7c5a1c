/* libLLVM-14 opened at run time (devices/cpu/jit/llvm_api.h has why). */
#include "devices/cpu/jit/llvm_api.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#ifndef TGC_LLVM_SONAME
#define TGC_LLVM_SONAME "libLLVM-14.so.1"
#endif

tgc_llvm_api tgc_llvm;

bool tgc_llvm_load(char *err, size_t err_size) {
    void *lib = dlopen(TGC_LLVM_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        snprintf(err, err_size, "cannot open %s: %s", TGC_LLVM_SONAME, dlerror());
        return false;
    }
#define TGC_LLVM_FIND(f)                                                                         \
    {                                                                                            \
        void *sym = dlsym(lib, #f);                                                              \
        if (sym == NULL) {                                                                       \
            snprintf(err, err_size, "%s lacks %s", TGC_LLVM_SONAME, #f);                         \
            memset(&tgc_llvm, 0, sizeof tgc_llvm);                                               \
            return false;                                                                        \
        }                                                                                        \
        memcpy(&tgc_llvm.f, &sym, sizeof sym); /* a data pointer as a function pointer (POSIX) */ \
    }
    TGC_LLVM_FUNCTIONS(TGC_LLVM_FIND)
#undef TGC_LLVM_FIND
    return true; /* the library stays open for the process */
}
