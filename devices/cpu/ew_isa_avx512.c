/* The elementwise loops for AVX-512 F/BW/VL/DQ with FMA and F16C (64-byte vectors),
 * compiled with that ISA's flags (CMakeLists.txt); devices/cpu/ew_loops.h. */
#define TGC_EW_ISA avx512
#include "devices/cpu/ew_loops.h"
