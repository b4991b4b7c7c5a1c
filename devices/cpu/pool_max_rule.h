/* MaxPool's rule on float32, in one place for the paths that compute it
 * without Indices (kernels_pool.c's rows, pool_padded.c's planes,
 * pool_max_rows.c's rows then columns): the running maximum e takes v when
 * v is greater or a NaN, so a NaN wins and ties keep the maximum already
 * there; ONNX's Max rule (graph/elementwise.def's Max row). Written with
 * the NaN test first: GCC then makes one compare-and-select of the pair
 * and one NaN test (pool_max_rows.c's 3x3 by 2 on [1, 64, 111, 111]: 156
 * -> 135 us against the "greater or NaN" form). Private to the cpu
 * kernels. */
#ifndef TGC_DEVICES_CPU_POOL_MAX_RULE_H
#define TGC_DEVICES_CPU_POOL_MAX_RULE_H

#define TGC_POOL_MAX_F32(v, e) ((v) != (v) ? (v) : (v) > (e) ? (v) : (e))

#endif
