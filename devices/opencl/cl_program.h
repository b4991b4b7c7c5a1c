/* Building the embedded OpenCL programs for one device, with a disk cache
 * of built binaries, and the kernel objects made from them (private). */
#ifndef TGC_DEVICES_OPENCL_PROGRAM_H
#define TGC_DEVICES_OPENCL_PROGRAM_H

#include "devices/opencl/opencl.h"

/* Builds every embedded .cl file into c->programs. A binary cached under
 * $XDG_CACHE_HOME/tgc (else ~/.cache/tgc), keyed by a hash of the source,
 * the device name, the platform, the driver version and the build options,
 * is used when present; otherwise the source is compiled and the binary
 * stored (atomically; a cache that cannot be written is skipped). A build
 * failure reports the file name and the OpenCL build log. */
tgc_status tgc_cl_programs_build(tgc_cl_device *c, tgc_diags *diags);

/* Builds one source (through the cache) into *out: the unit that
 * tgc_cl_programs_build repeats per file, open to tests. */
struct tgc_cl_source;
tgc_status tgc_cl_program_build(tgc_cl_device *c, const struct tgc_cl_source *src, tgc_diags *diags, cl_program *out);

/* The kernel object `name` from whichever program defines it, made on first
 * use and kept; NULL if no program has it. Call with c->lock held. */
cl_kernel tgc_cl_kernel_get(tgc_cl_device *c, const char *name);

/* The embedded source of kernels/<name> ("nn.cl"); NULL when there is none. */
const struct tgc_cl_source *tgc_cl_source_named(const char *name);

/* A hash of `size` bytes at `data` (a source's text) with c's device name,
 * platform, driver version and build options: what a built binary depends
 * on, so what keys a cache of anything built or measured from that text on
 * that device (the program cache; the GEMM kernel's tuned tiles). */
uint64_t tgc_cl_device_key(const tgc_cl_device *c, const void *data, size_t size);

/* Releases kernels and programs. */
void tgc_cl_programs_release(tgc_cl_device *c);

#endif
