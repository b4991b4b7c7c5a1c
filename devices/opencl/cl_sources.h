/* The OpenCL C sources embedded at build time (scripts/embed_cl.cmake). */
#ifndef TGC_DEVICES_OPENCL_SOURCES_H
#define TGC_DEVICES_OPENCL_SOURCES_H

#include <stddef.h>

typedef struct tgc_cl_source {
    const char *name; /* file name, e.g. "elementwise.cl"; NULL ends the table */
    const char *text;
    size_t size;
} tgc_cl_source;

extern const tgc_cl_source tgc_cl_sources[];

#endif
