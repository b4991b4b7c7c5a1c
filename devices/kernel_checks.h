/* Checks and message helpers that the cpu and gpu kernels share: whether
 * an optional input or output is there, whether a tensor is float32, the
 * op's name and a dims list for messages, the check of an output's dims,
 * and the argument checks of ops both devices implement alike (axis,
 * Gather, Concat, Constant). Device-independent: they read only the kernel context.
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

/* As tgc_kernel_need_f32, for dtype t. */
tgc_status tgc_kernel_need_float(tgc_kernel_ctx *c, const tgc_value *v, const char *what, tgc_dtype t);

/* The float dtype c's kernel computes input X at, for the checks of the
 * geometry readers both devices share: X's own when it is float16 and the
 * kernel's definition (c->def) takes float16 (the gpu's nn kernels);
 * float32 otherwise (what the checks then ask every float tensor for). */
tgc_dtype tgc_kernel_float_type(const tgc_kernel_ctx *c, const tgc_value *x);

/* True when optional input i was given (not omitted, not past the end). */
bool tgc_kernel_has_input(const tgc_kernel_ctx *c, int i);

/* Checks one tensor handed to a kernel (`what` "input" or "output" and i
 * name it): a valid dtype, rank 0..TGC_MAX_RANK, dims >= 0 whose byte size
 * fits size_t, and unless it is empty a buffer that large, in host memory
 * (host) or in the kernel's device's memory. Fails through tgc_kernel_fail. */
tgc_status tgc_kernel_check_tensor(tgc_kernel_ctx *c, const char *what, int i, const tgc_value *v, bool host);

/* Checks the tensors a kernel was handed: at least `min_inputs` inputs
 * (later ones optional, omitted or given) and `n_outputs` outputs, each as
 * tgc_kernel_check_tensor with host memory for every tensor (all_host: the
 * cpu kernels and host-memory gpu kernels) or for the inputs whose bit is
 * set in host_inputs, the device's memory for the rest. TGC_OK, or
 * TGC_ERR_RUNTIME with the reason in c->error. */
tgc_status tgc_kernel_check_tensors(tgc_kernel_ctx *c, int min_inputs, int n_outputs, uint32_t host_inputs,
                                    bool all_host);

/* Reads the int32/int64 rank-0 or 1-D host-memory input i (a shape
 * argument; `what` names it in messages) into out[0..*n), at most `max`
 * values. Fails on another dtype or rank, or more than `max` values. */
tgc_status tgc_kernel_read_ints(tgc_kernel_ctx *c, int i, const char *what, int64_t *out, int max, int *n);

/* tgc_kernel_check_tensors with every tensor in host memory. */
tgc_status tgc_kernel_check_host(tgc_kernel_ctx *c, int min_inputs, int n_outputs);

/* True when optional output i is wanted: the executor gave it a buffer
 * (an empty tensor's buffer too: it has no memory, but it exists). */
bool tgc_kernel_has_output(const tgc_kernel_ctx *c, int i);

/* The op's name for messages: as written in the graph, else the node's. */
const char *tgc_kernel_op_name(const tgc_kernel_ctx *c);

/* Writes "[2, 3, 4]" (at most TGC_MAX_RANK dims) into buf, which holds
 * TGC_KERNEL_DIMS_BUF bytes; returns buf. */
const char *tgc_kernel_dims_str(int rank, const int64_t *dims, char *buf);

/* Fails unless output o has rank `rank` and dims dims[0..rank); the
 * message names the op, the output and both shapes. */
tgc_status tgc_kernel_expect_dims(tgc_kernel_ctx *c, int o, int rank, const int64_t *dims);

/* Fails unless output 0 has `dtype` and input 0's element count (the
 * unary elementwise ops). */
tgc_status tgc_kernel_need_like(tgc_kernel_ctx *c, tgc_dtype dtype);

/* The `axis` attribute (default dflt) of a tensor of rank `rank` >= 1, in
 * [-rank, rank), made non-negative in *axis; fails naming the op. */
tgc_status tgc_kernel_axis_attr(tgc_kernel_ctx *c, int64_t dflt, int rank, int *axis);

/* Gather-13's arguments: data (input 0) of rank r >= 1, int32 or int64
 * indices (input 1) of rank q with r + q - 1 <= TGC_MAX_RANK, axis in
 * [-r, r) (made non-negative in *axis), and output 0's dims data[:axis] +
 * indices.shape + data[axis+1:]. The indices' values are the kernel's to
 * check. */
tgc_status tgc_kernel_gather_shape(tgc_kernel_ctx *c, int *axis);

/* Concat-13's arguments: inputs of output 0's dtype and one rank r >= 1
 * whose dims agree except on `axis` (required, in [-r, r); made
 * non-negative in *axis), where they add up (without overflow) to output
 * 0's dim, dims[0..r) receiving output 0's dims. */
tgc_status tgc_kernel_concat_shape(tgc_kernel_ctx *c, int *axis, int64_t *dims);

/* Constant-13's value: exactly one of its value attributes (value,
 * value_float(s), value_int(s), value_string(s)) in *attr (borrowed from the
 * node), *which its index in that order. Fails when none or several are set. */
tgc_status tgc_kernel_constant_attr(tgc_kernel_ctx *c, const tgc_attr **attr, int *which);

/* ConstantOfShape's fill: the one element of its `value` attribute (a
 * tensor; float32 0 when absent) in *elem (borrowed from the node) and its
 * dtype in *dtype, which output 0 must have. Fails through tgc_kernel_fail. */
tgc_status tgc_kernel_fill_value(tgc_kernel_ctx *c, const void **elem, tgc_dtype *dtype);

#endif
