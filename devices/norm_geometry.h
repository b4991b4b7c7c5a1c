/* BatchNormalization's and LayerNormalization's argument checks and
 * geometry, shared by the cpu and gpu kernels (devices/cpu/kernels_norm.c,
 * devices/opencl/kernels_nn.c) so that both accept the same nodes and fail
 * with the same words. Device-independent: it reads only attributes and
 * dims; how Scale and B broadcast over a row is each device's to check,
 * as each lays them out its own way.
 *
 * Example usage:
 *     tgc_layer_norm_geometry g;
 *     tgc_status st = tgc_layer_norm_geometry_read(c, &g);
 *     if (st != TGC_OK) return st;
 *     // X is [g.rows, g.size] around axis g.ax
 */
#ifndef TGC_DEVICES_NORM_GEOMETRY_H
#define TGC_DEVICES_NORM_GEOMETRY_H

#include "devices/kernel.h"
#include "devices/kernel_checks.h"

#include <stdbool.h>
#include <stdint.h>

/* Checks a BatchNormalization-15 node in inference mode (training_mode 0,
 * one output): X [N, C, ...], scale, B, input_mean and input_var [C], Y of
 * X's shape, all float32. *planes is N * C, *channels C, *size the elements
 * of a plane. Returns TGC_OK, or fails through tgc_kernel_fail. */
tgc_status tgc_batch_norm_geometry_read(tgc_kernel_ctx *c, int64_t *planes, int64_t *channels, int64_t *size);

/* A LayerNormalization node's geometry: X seen as [rows, size] around the
 * normalised axis. */
typedef struct tgc_layer_norm_geometry {
    int ax;                               /* the axis attribute in [0, rank) */
    int64_t rows;                         /* X.shape[:axis] elements */
    int64_t size;                         /* X.shape[axis:] elements */
    bool has_b, want_mean, want_inv;      /* input B given; outputs Mean, InvStdDev wanted */
} tgc_layer_norm_geometry;

/* Checks a LayerNormalization-17 node: X, Scale, optional B, Y of X's
 * shape, optional Mean and InvStdDev of `rows` elements, all float32, and
 * the axis attribute. Scale's and B's shapes are not checked here. Returns
 * TGC_OK, or fails through tgc_kernel_fail. */
tgc_status tgc_layer_norm_geometry_read(tgc_kernel_ctx *c, tgc_layer_norm_geometry *g);

#endif
