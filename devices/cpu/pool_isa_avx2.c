/* MaxPool's register kernel for AVX2 (32-byte vectors), compiled
 * with that ISA's flags (CMakeLists.txt): pool_pairs.h, in the table
 * devices/cpu/pool_isa.h declares. */
#include "devices/cpu/pool_pairs.h"
#include "devices/cpu/pool_narrow.h"

const tgc_pool_isa tgc_pool_isa_avx2 = {
    .isa = TGC_ISA_NAME,
    .lanes = TGC_VLANES,
    .pairs_rows = pp_rows_run,
    .narrow_plane = pn_narrow_plane,
};
