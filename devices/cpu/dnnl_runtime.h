/* What the cpu's oneDNN users share (gemm_packed.c owns it): the process's
 * one cpu engine, the lock held while primitives are made, and running a
 * primitive on the calling thread with that thread's own stream and
 * scratchpad (primitives are made with user scratchpads: this oneDNN build
 * has one library scratchpad for the process). Private to the cpu device;
 * only with oneDNN (TGC_HAVE_DNNL).
 *
 * Example usage:
 *     tgc_dnnl_make_lock();
 *     ... dnnl_primitive_desc_create(&pd, &desc, attr, tgc_dnnl_engine(), NULL) ...
 *     tgc_dnnl_make_unlock();
 *     bool ok = tgc_dnnl_run(prim, scratch_bytes, n, args);
 */
#ifndef TGC_DEVICES_CPU_DNNL_RUNTIME_H
#define TGC_DEVICES_CPU_DNNL_RUNTIME_H

#ifdef TGC_HAVE_DNNL

#include <oneapi/dnnl/dnnl.h>
#include <stdbool.h>
#include <stddef.h>

/* The engine, or NULL where oneDNN is off (tgc_packed_gemm_available). */
dnnl_engine_t tgc_dnnl_engine(void);

/* Held while primitives are made and weights reordered: one thread at a
 * time (a reorder uses oneDNN's own scratchpad). */
void tgc_dnnl_make_lock(void);
void tgc_dnnl_make_unlock(void);

/* The calling thread's stream (made on first use; NULL on failure), with
 * oneDNN's OpenMP runtime told to stay on this thread. */
dnnl_stream_t tgc_dnnl_thread_stream(void);

/* What an argument's memory object is for: each role has its own objects,
 * so the arguments of one primitive never take each other's. */
typedef enum tgc_dnnl_role {
    TGC_DNNL_SRC,
    TGC_DNNL_WEIGHTS,
    TGC_DNNL_DST,
    TGC_DNNL_BIAS,
    TGC_DNNL_ZERO_POINT,
    TGC_DNNL_ROLES
} tgc_dnnl_role;

/* A memory object of layout *md over data (not copied, not owned), for an
 * argument of a primitive run next on the calling thread. The thread keeps
 * it (the caller must not destroy it) and reuses it for the same role and
 * layout on later calls, pointed at their data (dnnl_memory_set_data_handle):
 * making one took 0.3 us and four allocations, and a MobileNetV3-Small run
 * made 564. It stays valid until this thread makes another in its place
 * (for the same role, once the four ways of its layout's set are taken).
 * Host memory: 832 bytes an object, at most 5 x 256 a thread, freed when
 * the thread ends. NULL on failure (no memory). */
dnnl_memory_t tgc_dnnl_arg(tgc_dnnl_role role, const dnnl_memory_desc_t *md, void *data);

/* How many memory objects tgc_dnnl_arg has made on the calling thread. */
long tgc_dnnl_args_made(void);

/* Runs prim on the calling thread with args[0 .. n) (room for one more in
 * args: the scratchpad of scratch_bytes is added) and waits for it. False
 * on any failure. */
bool tgc_dnnl_run(dnnl_primitive_t prim, size_t scratch_bytes, int n, dnnl_exec_arg_t *args);

/* True where oneDNN's int8 products are exact: a cpu with VNNI (AVX512-VNNI
 * or AVX-VNNI: vpdpbusd sums in int32; before it, vpmaddubsw saturates
 * pairs of products at int16). */
bool tgc_dnnl_exact_int8(void);

/* The bytes a primitive made with user scratchpads needs for them. */
size_t tgc_dnnl_scratch_size(const_dnnl_primitive_desc_t pd);

#endif
#endif
