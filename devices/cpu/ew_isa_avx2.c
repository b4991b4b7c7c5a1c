/* The elementwise loops for AVX2 with FMA and F16C (32-byte vectors),
 * compiled with that ISA's flags (CMakeLists.txt); devices/cpu/ew_loops.h. */
#define TGC_EW_ISA avx2
#include "devices/cpu/ew_loops.h"
