/* IEEE 754 binary16 <-> binary32 conversion (round to nearest even), for
 * float16 tensors on hosts without native half arithmetic. */
#ifndef TGC_SUPPORT_HALF_H
#define TGC_SUPPORT_HALF_H

#include <stdint.h>

/* Exact: every binary16 value, NaNs and infinities included, is a float. */
float tgc_half_to_float(uint16_t h);

/* Rounds to nearest even; overflow gives infinity, NaN stays NaN. */
uint16_t tgc_float_to_half(float f);

#endif
