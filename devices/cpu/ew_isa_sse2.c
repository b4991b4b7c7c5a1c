/* The elementwise loops for the x86-64 baseline (SSE2, 16-byte vectors),
 * compiled with that ISA's flags (CMakeLists.txt); devices/cpu/ew_loops.h. */
#define TGC_EW_ISA sse2
#include "devices/cpu/ew_loops.h"
