/* OpenBLAS's thread count (see blas_threads.h). */
#include "devices/cpu/blas_threads.h"

#include <cblas.h>

/* The pthreads build's server shutdown, looked up weakly: other OpenBLAS
 * builds lack it. */
extern int blas_thread_shutdown_(void) __attribute__((weak));

void tgc_cpu_blas_threads(int threads) {
    openblas_set_num_threads(threads);
    if (threads == 1 && blas_thread_shutdown_ != NULL) blas_thread_shutdown_();
}
