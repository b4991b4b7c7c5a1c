/* Channels-last kernels' shared pieces (_QLinearConvNHWC, _ConvNHWC: the
 * nhwc-conv pass's nodes): a 4-D value read in the other order, and the
 * way such a kernel runs where its fast path cannot: the NCHW kernel on
 * transposed copies. Private to the cpu backend. */
#ifndef TGC_DEVICES_CPU_NHWC_H
#define TGC_DEVICES_CPU_NHWC_H

#include "devices/kernel.h"

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

#endif
