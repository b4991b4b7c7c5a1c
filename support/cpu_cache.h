/* The host cpu's caches, as the cost model needs them. Private to the
 * library. */
#ifndef TGC_SUPPORT_CPU_CACHE_H
#define TGC_SUPPORT_CPU_CACHE_H

#include <stdint.h>

/* Bytes of the last-level cache the calling thread's core reads from: the
 * highest level cpu0 lists in /sys/devices/system/cpu/cpu0/cache (Linux;
 * on an AMD EPYC, one CCD's L3, which glibc's sysconf would give as the
 * whole package's), else sysconf's _SC_LEVEL3_CACHE_SIZE or
 * _SC_LEVEL2_CACHE_SIZE; 0 when none says. Read once; thread-safe. */
int64_t tgc_last_level_cache_bytes(void);

#endif
