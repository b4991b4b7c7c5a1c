/* The monotonic clock, for durations: only differences between two
 * readings mean anything.
 *
 * Example usage:
 *     int64_t t0 = tgc_now_ns();
 *     work();
 *     int64_t took_ns = tgc_now_ns() - t0;
 */
#ifndef TGC_SUPPORT_CLOCK_H
#define TGC_SUPPORT_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Nanoseconds on CLOCK_MONOTONIC. */
static inline int64_t tgc_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

#endif
