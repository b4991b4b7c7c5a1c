/* tgc_spin_until: poll, pause, and every few dozen polls look at the clock
 * and yield the core (sched_yield returns at once when nothing else wants
 * it; on a loaded machine it lets the thread doing the work run). */
#include "support/spin.h"

#include "support/clock.h"
#include "support/settings.h"

#include <stdatomic.h>
#include <stdint.h>
#include <sched.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CPU_RELAX() _mm_pause()
#elif defined(__aarch64__)
#define CPU_RELAX() __asm__ __volatile__("yield")
#else
#define CPU_RELAX() atomic_signal_fence(memory_order_seq_cst)
#endif

/* The budget in nanoseconds: TGC_SPIN_US of the process's newest settings. */
static int64_t spin_budget_ns(void) { return tgc_settings_current()->spin_us * 1000; }

bool tgc_spin_until(bool (*ready)(void *arg), void *arg) {
    int64_t budget = spin_budget_ns();
    if (budget == 0) return ready(arg);
    int64_t deadline = tgc_now_ns() + budget;
    for (;;) {
        for (int i = 0; i < 32; i++) {
            if (ready(arg)) return true;
            CPU_RELAX();
        }
        if (tgc_now_ns() >= deadline) return ready(arg);
        sched_yield(); /* a thread waiting for this core gets it: spinning must not starve the work */
    }
}
