/* The tile the gpu's GEMM kernel (kernels/nn.cl's nn_conv_gemm_f32: Conv,
 * MatMul, Gemm) takes for each layer shape on one device, as tuning
 * measured it: kept in memory, and in the cache folder's
 * gemm-tiles-<key>.txt (the key: device, platform, driver and nn.cl's
 * text, as the program cache's), read when the device opens; so a tuned
 * shape keeps its tile in later processes. Private to devices/opencl.
 *
 * A file line: "b_kind m n k kk z tile" (decimal ints; tile 32 or 64).
 * The file is tgc's own, but read as untrusted: a line that does not
 * parse, or says another tile, is skipped. */
#ifndef TGC_DEVICES_OPENCL_GEMM_TILES_H
#define TGC_DEVICES_OPENCL_GEMM_TILES_H

#include "devices/opencl/opencl.h"

#include <stdint.h>

/* One layer shape: how B is read, M/group, out_size, K, taps, and the
 * GEMMs in one launch (images x groups). */
typedef struct tgc_cl_tile_shape {
    int64_t b_kind, m, n, k, kk, z;
} tgc_cl_tile_shape;

/* Reads c's file into its table (nothing there, or no cache folder: an
 * empty table). Call once, when the device opens. */
void tgc_cl_tiles_load(tgc_cl_device *c);

/* The tile tuning chose for shape s on c: 32 or 64; 0 when none was. Thread
 * safe (takes c->lock). */
int tgc_cl_tiles_get(tgc_cl_device *c, const tgc_cl_tile_shape *s);

/* Keeps `tile` (32 or 64) for shape s on c, and appends it to c's file.
 * Thread safe (takes c->lock). */
void tgc_cl_tiles_put(tgc_cl_device *c, const tgc_cl_tile_shape *s, int tile);

/* Frees c's table. */
void tgc_cl_tiles_release(tgc_cl_device *c);

#endif
