/* Program building and the binary cache. The cache key covers everything
 * that changes the binary: source text, device, platform, driver version,
 * build options; so a stale binary is never loaded. */
#include "devices/opencl/cl_program.h"

#include "devices/opencl/cl_sources.h"
#include "devices/opencl/kernels_fused_cl.h"
#include "support/alloc.h"
#include "support/cache_dir.h"
#include "support/diag.h"
#include "support/strmap.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BUILD_OPTIONS "-cl-std=CL1.2"

/* Kernel objects per device: name -> index into a small array. */
typedef struct kernel_cache {
    tgc_strmap index;
    cl_kernel *kernels;
    int count, cap;
} kernel_cache;

static uint64_t fnv1a(uint64_t h, const void *data, size_t n) {
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

const tgc_cl_source *tgc_cl_source_named(const char *name) {
    for (const tgc_cl_source *s = tgc_cl_sources; s->name != NULL; s++)
        if (strcmp(s->name, name) == 0) return s;
    return NULL;
}

uint64_t tgc_cl_device_key(const tgc_cl_device *c, const void *data, size_t size) {
    uint64_t h = 1469598103934665603ull;
    h = fnv1a(h, data, size);
    h = fnv1a(h, c->device_name, strlen(c->device_name) + 1);
    h = fnv1a(h, c->platform_name, strlen(c->platform_name) + 1);
    h = fnv1a(h, c->driver_version, strlen(c->driver_version) + 1);
    return fnv1a(h, BUILD_OPTIONS, sizeof BUILD_OPTIONS);
}

static void cache_path(const tgc_cl_device *c, const tgc_cl_source *src, char *out, size_t size) {
    char dir[1100];
    if (!tgc_cache_dir(NULL, dir, sizeof dir)) {
        out[0] = '\0';
        return;
    }
    snprintf(out, size, "%s/%016" PRIx64 "-%s.bin", dir, tgc_cl_device_key(c, src->text, src->size), src->name);
}

static unsigned char *read_all(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) return NULL;
    unsigned char *buf = NULL;
    if (fseek(f, 0, SEEK_END) == 0) {
        long n = ftell(f);
        if (n > 0 && fseek(f, 0, SEEK_SET) == 0 && (buf = tgc_malloc((size_t)n)) != NULL &&
            fread(buf, 1, (size_t)n, f) != (size_t)n) {
            tgc_free(buf);
            buf = NULL;
        }
        *size = n > 0 ? (size_t)n : 0;
    }
    fclose(f);
    return buf;
}

static void store_binary(cl_program p, const char *path) {
    size_t size = 0;
    if (path[0] == '\0' || clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL) != CL_SUCCESS ||
        size == 0)
        return;
    char tmp[1200];
    int len = snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    if (len < 0 || (size_t)len >= sizeof tmp) return; /* a cut name would be another file's: not cached */
    unsigned char *bin = tgc_malloc(size);
    if (bin != NULL && clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL) == CL_SUCCESS) {
        FILE *f = fopen(tmp, "wb");
        if (f != NULL) {
            bool ok = fwrite(bin, 1, size, f) == size;
            ok = fclose(f) == 0 && ok;
            if (!ok || rename(tmp, path) != 0) unlink(tmp);
        }
    }
    tgc_free(bin);
}

static cl_program from_cache(tgc_cl_device *c, const char *path) {
    size_t size = 0;
    unsigned char *bin = path[0] ? read_all(path, &size) : NULL;
    if (bin == NULL) return NULL;
    cl_int status, err;
    const unsigned char *bins[1] = {bin};
    cl_program p = clCreateProgramWithBinary(c->context, 1, &c->id, &size, bins, &status, &err);
    tgc_free(bin);
    if (err != CL_SUCCESS || status != CL_SUCCESS) {
        if (p != NULL) clReleaseProgram(p);
        return NULL;
    }
    if (clBuildProgram(p, 1, &c->id, BUILD_OPTIONS, NULL, NULL) != CL_SUCCESS) {
        clReleaseProgram(p);
        return NULL;
    }
    return p;
}

static tgc_status build_log_error(tgc_cl_device *c, cl_program p, const tgc_cl_source *src, cl_int err,
                                  tgc_diags *diags) {
    size_t size = 0;
    clGetProgramBuildInfo(p, c->id, CL_PROGRAM_BUILD_LOG, 0, NULL, &size);
    char *log = tgc_malloc(size + 1);
    if (log != NULL) {
        log[0] = '\0';
        clGetProgramBuildInfo(p, c->id, CL_PROGRAM_BUILD_LOG, size, log, NULL);
        log[size] = '\0';
    }
    tgc_diag_error(diags, NULL, (tgc_srcpos){0, 0}, "opencl-build",
                   "%s (%s): cannot build devices/opencl/kernels/%s: %s\n%s", c->base.name, c->device_name, src->name,
                   tgc_cl_error_name(err), log ? log : "");
    tgc_free(log);
    return TGC_ERR_RUNTIME;
}

tgc_status tgc_cl_program_build(tgc_cl_device *c, const tgc_cl_source *src, tgc_diags *diags, cl_program *out) {
    char path[1200];
    cache_path(c, src, path, sizeof path);
    cl_program p = from_cache(c, path);
    if (p != NULL) {
        c->counters.cache_loads++;
        *out = p;
        return TGC_OK;
    }
    cl_int err;
    const char *text = src->text;
    p = clCreateProgramWithSource(c->context, 1, &text, &src->size, &err);
    if (err != CL_SUCCESS)
        return tgc_diag_error(diags, NULL, (tgc_srcpos){0, 0}, "opencl", "%s: cannot load %s: %s", c->base.name,
                              src->name, tgc_cl_error_name(err)),
               TGC_ERR_RUNTIME;
    err = clBuildProgram(p, 1, &c->id, BUILD_OPTIONS, NULL, NULL);
    if (err != CL_SUCCESS) {
        tgc_status s = build_log_error(c, p, src, err, diags);
        clReleaseProgram(p);
        return s;
    }
    c->counters.program_builds++;
    store_binary(p, path);
    *out = p;
    return TGC_OK;
}

tgc_status tgc_cl_programs_build(tgc_cl_device *c, tgc_diags *diags) {
    kernel_cache *kc = tgc_calloc(1, sizeof *kc);
    if (kc == NULL) return TGC_ERR_NOMEM;
    c->base.impl = kc;
    for (const tgc_cl_source *src = tgc_cl_sources; src->name != NULL; src++) {
        if (c->n_programs == TGC_CL_MAX_PROGRAMS) return TGC_ERR_UNSUPPORTED;
        tgc_status s = tgc_cl_program_build(c, src, diags, &c->programs[c->n_programs]);
        if (s != TGC_OK) return s;
        c->n_programs++;
        c->counters.programs++;
    }
    return TGC_OK;
}

cl_kernel tgc_cl_kernel_get(tgc_cl_device *c, const char *name) {
    kernel_cache *kc = c->base.impl;
    int32_t i = tgc_strmap_get(&kc->index, name);
    if (i >= 0) return kc->kernels[i];
    if (kc->count == kc->cap) {
        int cap = kc->cap ? kc->cap * 2 : 32;
        cl_kernel *k = tgc_realloc(kc->kernels, (size_t)cap * sizeof *k);
        if (k == NULL) return NULL;
        kc->kernels = k;
        kc->cap = cap;
    }
    for (int p = 0; p < c->n_programs; p++) {
        cl_int err;
        cl_kernel k = clCreateKernel(c->programs[p], name, &err);
        if (err != CL_SUCCESS) continue;
        if (tgc_strmap_put(&kc->index, name, kc->count) != TGC_OK) {
            clReleaseKernel(k);
            return NULL;
        }
        kc->kernels[kc->count++] = k;
        c->counters.kernels++;
        return k;
    }
    return NULL;
}

void tgc_cl_programs_release(tgc_cl_device *c) {
    tgc_cl_fused_release(c);
    kernel_cache *kc = c->base.impl;
    if (kc != NULL) {
        for (int i = 0; i < kc->count; i++) clReleaseKernel(kc->kernels[i]);
        c->counters.kernels -= kc->count;
        tgc_free(kc->kernels);
        tgc_strmap_release(&kc->index);
        tgc_free(kc);
        c->base.impl = NULL;
    }
    for (int p = 0; p < c->n_programs; p++) clReleaseProgram(c->programs[p]);
    c->counters.programs -= c->n_programs;
    c->n_programs = 0;
}
