/* Checks and message helpers that the cpu and gpu kernels share: whether
 * an optional input or output is there, whether a tensor is float32, the
 * op's name and a dims list for messages, and the check of an output's
 * dims. Device-independent: they read only the kernel context.
 *
 * Example usage (inside a kernel):
 *     tgc_status st = tgc_kernel_need_f32(c, &c->inputs[0], "input X");
 *     if (st == TGC_OK && tgc_kernel_has_input(c, 2)) st = tgc_kernel_need_f32(c, &c->inputs[2], "input B");
 *     if (st != TGC_OK) return st;   // c->error already says why
 */
#ifndef TGC_DEVICES_KERNEL_CHECKS_H
#define TGC_DEVICES_KERNEL_CHECKS_H

#include "devices/kernel.h"

#include <stdbool.h>
#include <stdint.h>

/* Room for "[d0, d1, ...]" of TGC_MAX_RANK int64 dims. */
#define TGC_KERNEL_DIMS_BUF 192

/* Checks that tensor v (an input or output of c) is present (not an
 * omitted optional) with dtype float32; fails through tgc_kernel_fail
 * naming `what` otherwise. */
tgc_status tgc_kernel_need_f32(tgc_kernel_ctx *c, const tgc_value *v, const char *what);

/* True when optional input i was given (not omitted, not past the end). */
bool tgc_kernel_has_input(const tgc_kernel_ctx *c, int i);

/* True when optional output i is wanted: the executor gave it a buffer
 * (an empty tensor's buffer too: it has no memory, but it exists). */
bool tgc_kernel_has_output(const tgc_kernel_ctx *c, int i);

/* The op's name for messages: as written in the graph, else the node's. */
const char *tgc_kernel_op_name(const tgc_kernel_ctx *c);

/* Writes "[2, 3, 4]" (at most TGC_MAX_RANK dims) into buf, which holds
 * TGC_KERNEL_DIMS_BUF bytes; returns buf. */
const char *tgc_kernel_dims_str(int rank, const int64_t *dims, char *buf);

/* Fails unless output 0 has rank `rank` and dims dims[0..rank); the
 * message names the op and both shapes. */
tgc_status tgc_kernel_expect_dims(tgc_kernel_ctx *c, int rank, const int64_t *dims);

/* ConstantOfShape's fill: the one element of its `value` attribute (a
 * tensor; float32 0 when absent) in *elem (borrowed from the node) and its
 * dtype in *dtype, which output 0 must have. Fails through tgc_kernel_fail. */
tgc_status tgc_kernel_fill_value(tgc_kernel_ctx *c, const void **elem, tgc_dtype *dtype);

#endif
