/* How many threads OpenBLAS gives each call: process-wide, OpenBLAS's own
 * setting. tgc's device pools split large GEMMs and convolutions
 * themselves (tgc_parallel_for), so OpenBLAS's threads would only compete
 * with them for the cores. */
#ifndef TGC_DEVICES_CPU_BLAS_THREADS_H
#define TGC_DEVICES_CPU_BLAS_THREADS_H

/* Gives each OpenBLAS call `threads` threads (>= 1). With one, the
 * threads OpenBLAS started when it loaded are also stopped: they spin
 * (sched_yield) for some 10^8 cycles after their last work, and on a
 * machine whose cores are hyperthreads that slows the thread doing the
 * work (`tgc run` of ResNet-18, start to output: 118 -> 111 ms). A
 * later call with more threads starts them again. Results do not depend
 * on it: OpenBLAS splits GEMM by rows and columns, never along K. Not
 * thread safe against OpenBLAS calls running at the same time. */
void tgc_cpu_blas_threads(int threads);

#endif
