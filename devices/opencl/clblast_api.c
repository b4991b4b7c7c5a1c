/* CLBlast opened at run time (devices/opencl/clblast_api.h has why). */
#include "devices/opencl/clblast_api.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#ifndef TGC_CLBLAST_SONAME
#define TGC_CLBLAST_SONAME "libclblast.so.1"
#endif

tgc_clblast_api tgc_clblast;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static atomic_bool opened;
static char open_error[512];

static void open_library(void) {
    void *lib = dlopen(TGC_CLBLAST_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        snprintf(open_error, sizeof open_error, "cannot open %s: %s", TGC_CLBLAST_SONAME, dlerror());
        return;
    }
    void *sgemm = dlsym(lib, "CLBlastSgemm"), *clear = dlsym(lib, "CLBlastClearCache");
    if (sgemm == NULL || clear == NULL) {
        snprintf(open_error, sizeof open_error, "%s lacks %s", TGC_CLBLAST_SONAME,
                 sgemm == NULL ? "CLBlastSgemm" : "CLBlastClearCache");
        return;
    }
    /* data pointers as function pointers (POSIX) */
    memcpy(&tgc_clblast.sgemm, &sgemm, sizeof sgemm);
    memcpy(&tgc_clblast.clear_cache, &clear, sizeof clear);
    void *temp_size = dlsym(lib, "CLBlastSGemmTempBufferSize"), *with_temp = dlsym(lib, "CLBlastSgemmWithTempBuffer");
    if (temp_size == NULL || with_temp == NULL) temp_size = with_temp = NULL;
    memcpy(&tgc_clblast.sgemm_temp_size, &temp_size, sizeof temp_size);
    memcpy(&tgc_clblast.sgemm_with_temp, &with_temp, sizeof with_temp);
    atomic_store(&opened, true); /* the library stays open for the process */
}

bool tgc_clblast_open(char *err, size_t err_size) {
    pthread_once(&once, open_library);
    if (atomic_load(&opened)) return true;
    if (err != NULL && err_size > 0) snprintf(err, err_size, "%s", open_error);
    return false;
}

bool tgc_clblast_is_open(void) { return atomic_load(&opened); }
