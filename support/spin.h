/* Bounded spin-waiting: the step between a busy thread handing work over
 * and a sleeping one waking up (a futex wake costs tens of microseconds on a
 * virtual machine, as long as a small kernel). Private to the library.
 *
 * Example usage:
 *     if (!tgc_spin_until(queue_nonempty, pool)) block_on_condition_variable();
 */
#ifndef TGC_SUPPORT_SPIN_H
#define TGC_SUPPORT_SPIN_H

#include <stdbool.h>

/* Polls ready(arg) with the cpu's pause hint for up to the spin budget
 * (TGC_SPIN_US microseconds, default 50, of the process's newest settings,
 * support/settings.h; 0 turns spinning off) and returns
 * true as soon as it holds, false when the budget ran out. ready must be
 * cheap and safe to call from any thread (an atomic load). The same
 * compromise as OpenMP runtimes' and OpenBLAS's spin-then-sleep: a core
 * that would idle anyway polls a little longer. */
bool tgc_spin_until(bool (*ready)(void *arg), void *arg);

#endif
