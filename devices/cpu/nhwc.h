/* Channels-last kernels' shared pieces (_QLinearConvNHWC, _ConvNHWC: the
 * nhwc-conv pass's nodes): a 4-D value read in the other order, and the
 * way such a kernel runs where its fast path cannot: the NCHW kernel on
 * transposed copies. Private to the cpu backend. */
#ifndef TGC_DEVICES_CPU_NHWC_H
#define TGC_DEVICES_CPU_NHWC_H

#include "devices/cpu/dnnl_conv.h"
#include "devices/kernel.h"
#include "devices/window.h"

/* v (4-D) with its dims as the other layout has them: [N, H, W, C] read as
 * [N, C, H, W] when to_nchw, else the reverse. Same buffer, same bytes:
 * only the dims move (a view for shape checks and geometries). Other ranks
 * are returned as they are. */
tgc_value tgc_cpu_nhwc_view(const tgc_value *v, bool to_nchw);

/* Runs nchw, the NCHW form of c's channels-last op, on copies: input 0
 * ([N, H, W, C]) transposed into NCHW, output 0
 * computed as [N, M, OH, OW] and transposed back into c's [N, OH, OW, M];
 * every other input passed as it is. The copies come from tgc_malloc and
 * are freed before returning; a failure to get them fails c's node. */
tgc_status tgc_cpu_nhwc_fallback(tgc_kernel_ctx *c, tgc_status (*nchw)(tgc_kernel_ctx *c));

/* oneDNN's float32 NHWC convolution for c's node of geometry g
 * (dnnl_conv.h), with W (input 1, [M, C / group, kh, kw]) a session
 * constant and B (input 2) passed with each run where g has a bias, adding
 * to what Y holds where `sum` (TGC_DNNL_CONV_SUM; the same every run of a
 * node): made
 * on the node's first run, its pieces cut from the sizes alone, and kept
 * in the node's kernel cache in place of W (held once). NULL, the kernel
 * then computing its own way, when W is not a constant, the node has no
 * cache, oneDNN declines g, or the cache was made for other shapes; NULL
 * with *no_memory set when host memory ran out (the kernel should fail:
 * its own way would give other bits than the runs before; a later run
 * tries again). The cache owns the result. */
const tgc_dnnl_conv *tgc_cpu_dnnl_conv_cached(tgc_kernel_ctx *c, const tgc_conv_geometry *g, bool sum,
                                             bool *no_memory);

/* The bytes tgc_cpu_dnnl_conv_cached's block holds for g, exactly (oneDNN
 * asked for its weights' layout: tgc_dnnl_conv_bytes); 0 where oneDNN
 * declines g. For the kernels' footprints. */
int64_t tgc_cpu_dnnl_conv_cache_bytes(const tgc_conv_geometry *g, bool sum);

#endif
