/* The direct convolution's vector kernels for AVX-512 F/BW/VL/DQ with FMA (64-byte vectors),
 * compiled with that ISA's flags (CMakeLists.txt): conv_rows.h,
 * conv_plane_rows.h, conv_dw_lanes.h, conv_channel_lanes.h and
 * conv_pointwise_lanes.h, in the table devices/cpu/conv_direct.h declares. */
#include "devices/cpu/conv_rows.h"
#include "devices/cpu/conv_plane_rows.h"
#include "devices/cpu/conv_dw_lanes.h"
#include "devices/cpu/conv_channel_lanes.h"
#include "devices/cpu/conv_pointwise_lanes.h"

const tgc_conv_isa tgc_conv_isa_avx512 = {
    .isa = TGC_ISA_NAME,
    .lanes = TGC_VLANES,
    .rows = cr_run,
    .dw_rows = cr_dw_run,
    .dw_plane = cr_dw_plane_run,
    .plane_rows = cp_plane_rows,
    .pack = cr_pack,
    .pack2 = cr_pack2,
    .dw_block = dl_block,
    .rows_by_channels = cl_run,
    .pointwise = pw_run,
    .pointwise_rows = PW_R,
};
